"""Stage 1, the config: YAML -> a validated, frozen `Config` -> the `CaseId`s it expands to.

loading reads and validates a file, sweep holds the values, subset narrows them from the command
line, values and yaml_source name every bad key by file and line, compare_block reads `compare:`.
"""
