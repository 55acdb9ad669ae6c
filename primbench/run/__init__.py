"""Stage 4, running: a sweep on one GPU (runner), on several (gpus, scheduler, worker, gpu_runs), and
the interleaved A/B of two variants (ab, ab_revision). Writes run files; reads nothing after them.
"""
