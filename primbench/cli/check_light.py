"""`primbench check --min-light F` on a GPU that has no baseline: the light floor alone gates
(compare/light_floor.py). A library's CI runs on whatever GPU it is given, with no baseline of
that model; a fraction of each case's own speed of light holds on any of them. Exit 0 when every
gated case reaches the floor, 1 when one does not."""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

from primbench.cli.compare import _check_outputs
from primbench.compare import light_floor
from primbench.errors import EXIT_FAILED
from primbench.outputs import write_atomically
from primbench.text_safety import printable


def check_light_alone(args, new, floor: light_floor.LightFloor) -> int:
    from primbench.runfile.frame import to_frame

    _check_outputs({"--markdown": args.markdown, "--junit": args.junit,
                    "--markdown-summary": getattr(args, "markdown_summary", None)},
                   "check prints its table there", [new.path])
    cases = light_floor.judge(to_frame(new), floor)
    failing = light_floor.under(cases)
    for text in light_floor.alone_lines(new.header.device_name, cases, floor, everything=args.all):
        print(printable(text))
    every = light_floor.alone_lines(new.header.device_name, cases, floor, everything=True)  # the files hold every case
    for path in filter(None, (args.markdown, getattr(args, "markdown_summary", None))):
        write_atomically(path, "\n".join(["## primbench check: the light floor", "",
                                          *(f"- {printable(t.strip())}" for t in every), ""]))
    if args.junit:
        write_atomically(args.junit, junit(cases, floor))
    return EXIT_FAILED if failing else 0


def junit(cases: list[light_floor.FloorCase], floor: light_floor.LightFloor) -> str:
    """One test case per gated case (those the floor judged), a failure for each under it."""
    gated = [c for c in cases if c.status in (light_floor.UNDER, light_floor.MET)]
    failures = sum(c.status == light_floor.UNDER for c in gated)
    rows = [f'<testsuites><testsuite name="primbench light floor" tests="{len(gated)}" failures="{failures}">']
    for case in gated:
        name = quoteattr(printable(case.key))
        if case.status == light_floor.UNDER:
            message = quoteattr(f"{case.pct_sol:.1f} % of light, under the floor of {light_floor.percent(floor.fraction)}")
            rows.append(f'<testcase classname="light_floor" name={name}><failure message={message}/></testcase>')
        else:
            rows.append(f'<testcase classname="light_floor" name={name}/>')
    rows.append("</testsuite></testsuites>\n")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + "\n".join(rows)
