"""After the run file: runs compared case by case with a verdict (verdicts), what compare and check
print (output), the same cases on several GPUs (replicas), and the formats other tools read (export).
No CuPy, no run/, no measuring/.
"""
