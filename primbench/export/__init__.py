"""After the run file: a run in the formats other tools read, one module per format (csv_table,
gbench_json, nvbench_json with nvbench_summaries, github_action), and which of its cases an export
holds (case_selection). It compares nothing: compare/ judges runs, this writes one run for someone
else's reader.

A format's module declares `FORMAT = ExportFormat(...)` (records.py): its name, the readers it is
for, an example, its options and its writer. formats.py finds every such module, and the command
line reads the records, so a new format is one new module here and its test.
No CuPy, no run/, no measuring/.
"""
