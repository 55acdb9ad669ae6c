"""After the run file: runs compared case by case with a verdict (verdicts), what compare and check
print (output), and the same cases on several GPUs (replicas). The formats other tools read are
export/'s.
No CuPy, no run/, no measuring/.
"""
