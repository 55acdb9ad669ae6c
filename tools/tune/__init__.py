"""The tuners: each times one kernel's forms and settings on the GPU in hand, checked, beside what
the registry holds, to choose the registered settings (docs/perf-notes.md records what they found).
Run one as `python -m tools.tune.<name> --help` from the repository root."""
