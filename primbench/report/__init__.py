"""The HTML pages after the run file: the report of a run (render, context and the sections), the
compare page, and the published site (publish). No CuPy here; formats.py writes every number."""
