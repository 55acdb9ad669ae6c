"""How `publish` scales: build a site of N runs (copies of one real run under new run ids and
start dates, one a day), then time adding one more run to it.

    python -m tools.probe.site_scale results/reference/nvidia-h200.jsonl.gz --runs 365 --work /tmp/scale

The N copies differ from the run only in their header's run_id and started, so their pages and
digests differ from the run's only in those fields: the tool renders one page with the real
`publish` and seeds the other N-1 pages and both caches from it (rendering 365 reports cold would
take half an hour and measure nothing new). Then it times one real `publish` of the N+1 runs: every
file is hashed, the new run is read and rendered, the index, histories and GPU page are drawn again.
Writes nothing outside --work.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from primbench.report.site import publish as publishing
from primbench.report.site.digest import DIGEST_NAME, DIGEST_SCHEMA
from primbench.report.site.page_cache import CACHE_NAME, page_key


def copy_run(lines: list[str], out: Path, run_id: str, started: str) -> Path:
    """`lines` (a run file's) with the header's run_id and started replaced, gzipped to `out`."""
    header = json.loads(lines[0])
    header["run_id"], header["started"] = run_id, started
    out.write_bytes(gzip.compress(("\n".join([json.dumps(header), *lines[1:]]) + "\n").encode(), compresslevel=1))
    return out


def build(run: Path, count: int, work: Path) -> tuple[Path, Path, list[Path]]:
    """`count` copies of `run` in work/runs, and a site in work/site as publish would have left it."""
    lines = gzip.decompress(run.read_bytes()).decode().splitlines() if run.suffix == ".gz" else run.read_text().splitlines()
    runs, site = work / "runs", work / "site"
    shutil.rmtree(work, ignore_errors=True)
    runs.mkdir(parents=True)
    start = datetime(2030, 1, 1, 3, 0, tzinfo=timezone.utc)
    copies = []
    for day in range(count + 1):
        started = (start + timedelta(days=day)).isoformat()
        copies.append(copy_run(lines, runs / f"scale-{day:04d}.jsonl.gz", f"scale-{day:04d}", started))
    newest = copies.pop()  # the run that is added later
    newest.rename(work / newest.name)
    newest = work / newest.name
    publishing.publish([copies[0]], site)  # one page and one digest, really rendered
    template_page = (site / "runs" / "scale-0000.html").read_text(encoding="utf-8")
    (template_digest,) = json.loads((site / DIGEST_NAME).read_text())["digests"].values()
    keys, digests = {}, {}
    for day, path in enumerate(copies):
        run_id = f"scale-{day:04d}"
        page = f"runs/{run_id}.html"
        (site / page).write_text(template_page.replace("scale-0000", run_id), encoding="utf-8")
        key = page_key(path)
        keys[Path(page).name] = key
        digests[key] = dict(template_digest, id=run_id, page=page, started=(start + timedelta(days=day)).isoformat())
    (site / CACHE_NAME).write_text(json.dumps(keys))
    (site / DIGEST_NAME).write_text(json.dumps({"schema": DIGEST_SCHEMA, "digests": digests}))
    return site, newest, copies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--runs", type=int, default=365)
    parser.add_argument("--work", type=Path, required=True, help="a scratch folder (emptied first)")
    args = parser.parse_args()
    began = time.perf_counter()
    site, newest, copies = build(args.run, args.runs, args.work)
    print(f"built a site of {len(copies)} runs in {time.perf_counter() - began:.1f} s", flush=True)
    began = time.perf_counter()
    publishing.publish([*copies, newest], site)
    took = time.perf_counter() - began
    pages = sorted((site / "runs").glob("*.html"), key=lambda p: p.stat().st_mtime_ns)
    print(f"adding 1 run to {len(copies)}: publish took {took:.1f} s; newest page {pages[-1].name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
