"""The probes and checks: each asks one question of the measurement itself (a ceiling at a size,
where sample jitter comes from, whether primbench.measure times as the CLI does) or makes a test
fixture (Nsight Compute captures). Run one as `python -m tools.probe.<name> --help` from the
repository root."""
