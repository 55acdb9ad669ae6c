"""Scan forms measured slower than the registered ones, kept to be measured again: their CUDA
sources, launch plans, timing scripts and tests. Not installed with primbench, not registered and
not collected by `make test` (pytest's testpaths is tests/); experiments/README.md says how to run
each piece."""
