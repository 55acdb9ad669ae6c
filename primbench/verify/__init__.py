"""Stage 2, verification before timing: inputs made on the GPU from a recorded seed, the outcomes of
comparing a result with its expected answer, and the sequence the runner and the GPU tests share.
"""
