"""The run file, the one interface between measuring and everything after it: `CaseId`, the typed
records, their schema, reading and writing, where runs live, the case frame, the statistics of raw
samples, and the published figures quoted beside runs. No CuPy, no run/, no measuring/.
"""
