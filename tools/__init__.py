"""primbench's lab tools: tuners (tools/tune/) and probes and checks (tools/probe/) that time kernel
forms and measurement recipes a run does not hold. Not installed with primbench and not part of a
run; each runs from the repository root as `python -m tools.tune.<name>` or
`python -m tools.probe.<name>`, and tools/common.py holds what more than one of them uses."""
