"""Write a counters file from captures of tools/probe/ncu_capture.py (each set's ncu.csv and manifest),
merged in the order given, as `primbench profile` would have written it beside RUN: how the
reference run's counters (results/reference/<gpu>.counters.json) were made from one device call.

Usage: python -m tools.probe.counters_from_capture RUN CAPTURE_DIR SET [SET ...] --git-sha SHA"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from primbench.profile import capture
from primbench.profile.counters import cases_from_capture
from primbench.runfile import counters


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("capture", type=Path)
    parser.add_argument("sets", nargs="+")
    parser.add_argument("--git-sha", required=True, help="the commit the capture ran (the device's .git can be stale)")
    args = parser.parse_args()
    version = (args.capture / "ncu-version.txt").read_text().splitlines()
    ncu = next((line.removeprefix("Version").strip() for line in version if line.startswith("Version")), "unknown")
    doc = None
    for name in args.sets:
        folder = args.capture / name
        manifest = json.loads((folder / "profile-manifest.json").read_text())
        cases = cases_from_capture((folder / "ncu.csv").read_text(), manifest, capture.METRICS)
        about = {"created": manifest.get("created"), "tool": {"name": "primbench", "version": "tools/probe/counters_from_capture.py"},
                 "git": {"sha": args.git_sha, "dirty": True, "source": "argument"}, "device": manifest.get("device"),
                 "ncu": {"version": ncu}, "metrics": dict(capture.METRICS), "run": args.run.name}
        doc = counters.merged(doc, cases, about)
    out = counters.counters_path_for(args.run)
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{out}: {len(doc['cases'])} cases")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
