"""The HTML pages after the run file: the report of a run (render, context and the sections) and the
compare page, with two wings: charts/ draws every chart, site/ publishes the static site of many
runs (publish). No CuPy here; formats.py writes every number."""


def __getattr__(name):
    # `from primbench.report import render_report`, as before render.py stopped being imported with
    # the package: loaded on first use.
    if name == "render_report":
        from primbench.report.render import render_report

        return render_report
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
