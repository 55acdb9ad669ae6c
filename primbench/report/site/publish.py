"""`bench.py publish results/ -o site/`: a static site that needs no server.

index.html lists every run found under the folder (baselines and other copies of one run counted
once), grouped by GPU model, with its date, commit and headline numbers; runs/<page_name(run id)>.html
is each run's full report; history-<gpu>.html draws, for that GPU and per op at its smallest, middle and
largest size, each variant's median time across the runs in time order (inline SVG, each point a
link to its run's report), marking where step detection finds a slowdown begin; gpus.html sets
the GPU models side by side in % of each one's own peak, per op from the newest run that covers
the op's largest size. Every page is self-contained
(inline CSS and charts, no network) and links back to the index.

Publishing is incremental: a run file is read in full only when its page or its digest (what the
shared pages need of it) is missing or was made from other bytes or other code. No CuPy.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from collections import defaultdict
from pathlib import Path

from primbench import progress
from primbench.errors import UserError
from primbench.pathnames import shown
from primbench.report.site.digest import DigestCache, digest
from primbench.report.site.page_cache import PageCache, page_key, plugins_fingerprint
from primbench.runfile.io import RunFileError, gpu_slug, load_run, run_stem
from primbench.runfile.locations import is_kept_copy

INDEX = "index.html"
# A run id that is already a plain lowercase file name is its own page name, so the pages of the
# run ids primbench makes keep their URLs; any other run id gets a prefix of at most this many
# characters and a hash of the whole id.
PLAIN_NAME = re.compile(r"[a-z0-9_-][a-z0-9._-]{0,79}")
HASHED_NAME = re.compile(r"--[0-9a-f]{10}$")
PREFIX_CHARS = 40
PAGE_NAME_CHARS = 80  # the longest page name, plain (PLAIN_NAME) or hashed (PREFIX_CHARS, "--" and 10 hex digits)
# Names Windows keeps for devices, whatever the extension: a site copied there must still open.
WINDOWS_DEVICES = {"con", "prn", "aux", "nul", *(f"{port}{i}" for port in ("com", "lpt") for i in range(1, 10))}


class _Entry:
    """One run file of the site: its key, its run id, its digest, and the run itself once it had to be read."""

    def __init__(self, path: Path, key: str, digest_: dict | None, run=None):
        self.path, self.key, self.digest, self.run = path, key, digest_, run
        self.run_id = digest_["id"] if digest_ else run.header.run_id or run_stem(path)


def _entries(paths, digests: DigestCache, skipped: list[str], plugins_key: str = "") -> tuple[list[_Entry], list[str]]:
    """Every readable run of the run files `paths`, each run once (by run id), oldest first, with
    its digest where the cache has one (else the run, read); and the reasons of unreadable files,
    after those in `skipped` already. `plugins_key`: the plugin files' fingerprint, part of each key."""
    files = [Path(p) for p in paths]
    chosen = {}
    for path in files:
        try:
            key = page_key(path, plugins_key)
        except OSError as exc:
            skipped.append(f"{path}: cannot read it ({exc.strerror or exc})")
            continue
        cached, run = digests.get(key), None
        if cached is None:
            try:
                run = load_run(path)
            except RunFileError as exc:
                skipped.append(str(exc))
                continue
        entry = _Entry(path, key, dict(cached, source=str(path)) if cached else None, run)
        run_id = entry.run_id
        if not nameable(run_id):
            skipped.append(f"{path}: its run id is not text a page can be named by or written in "
                           f"({ascii(run_id)[:80]}); give the run a run id of plain text")
            continue
        if run_id not in chosen or is_kept_copy(chosen[run_id].path):  # keep the copy that is not a baseline or reference
            chosen[run_id] = entry
    if not chosen:
        where = ", ".join(map(str, files))[:200] or "the folders given"
        raise UserError(f"{where}: no readable run files (*.jsonl, *.jsonl.gz)" + (f"; unreadable: {skipped[0]}" if skipped else ""))
    return sorted(chosen.values(), key=lambda e: _started(e)), skipped


def _started(entry: _Entry) -> str:
    return str((entry.digest["started"] if entry.digest else entry.run.header.started) or "")


def publish(paths, out_dir, skipped_names=(), plugins=()) -> Path:
    """Write the site for every run of `paths` (run files, or folders of them) into `out_dir`; return
    the index page's path. `skipped_names`: the lines for run files found with names no page can
    show (runfile/locations.py), skipped as unreadable files are. `plugins`: the plugin files
    loaded (--plugin), whose ops' own sections the pages draw.

    Every name inside `out_dir` is publish's own: a page or cache is written over whatever is there
    (a link planted in the site is replaced, never written through: outputs.write_own_file), and a
    runs/ that is a link is refused, as the pages would land wherever it points."""
    from primbench.outputs import check_writable
    from primbench.report import op_view
    from primbench.report.render import story_published, write_page, write_report

    out_dir = Path(out_dir)
    _refuse_a_linked_runs_folder(out_dir)
    check_writable(out_dir / INDEX, follow_links=False)  # a bad output is one line, before any progress line
    # and the run pages' folder, which may refuse on its own, or be too deep for the longest page name
    check_writable(out_dir / "runs" / INDEX, longest_name=len(f"{'x' * PAGE_NAME_CHARS}.html"), follow_links=False)
    cache, digests = PageCache(out_dir), DigestCache(out_dir)
    entries, skipped = _entries(paths, digests, list(skipped_names), plugins_fingerprint(plugins))
    for line in skipped:
        progress.say(f"skipped {line}")
    progress.say(f"publishing {len(entries)} run(s) into {out_dir}")
    published, rendered = story_published(), 0
    for entry in entries:
        page = Path("runs") / f"{page_name(entry.run_id)}.html"
        fresh = cache.fresh(out_dir / page, entry.key)
        if entry.digest is not None and fresh:
            entry.digest["page"] = page.as_posix()  # the name's rule, not what the digest file says
            continue  # neither its page nor its digest needs the run: the file is not even parsed
        if entry.run is None:
            entry.run = load_run(entry.path)
        views = op_view.build(entry.run)  # the report's and the digest's questions, answered once
        entry.digest = digest(entry.run, views, page.as_posix())
        if not fresh:  # a page is rendered again only when its run or the code changed
            rendered += 1
            progress.say(f"rendering {page} ({rendered})")
            write_report(entry.run, out_dir / page, published, views, index_href=f"../{INDEX}", in_site=True)
            cache.record(out_dir / page, entry.key)
        entry.run = None  # a year of runs is not held in memory at once
    progress.say(f"{rendered} report(s) rendered, {len(entries) - rendered} unchanged; drawing the history")
    _shared_pages(out_dir, [e.digest for e in entries], functools.partial(write_page, in_site=True))
    cache.save([out_dir / e.digest["page"] for e in entries])
    digests.save({e.key: {k: v for k, v in e.digest.items() if k != "source"} for e in entries})
    return write_page(INDEX + ".j2", out_dir / INDEX, groups=_groups(entries), skipped=skipped, total=len(entries),
                      index_href=None, in_site=True)


def _refuse_a_linked_runs_folder(out_dir: Path) -> None:
    runs = out_dir / "runs"
    if runs.is_symlink():
        raise UserError(f"{shown(runs)}: is a link (to {shown(os.readlink(runs))[:120]}), and the run pages would be "
                        "written wherever it points; remove it, publish makes its own runs/ folder")


def _shared_pages(out_dir: Path, all_digests: list[dict], write_page) -> None:
    from primbench.report.site import history

    by_gpu = defaultdict(list)
    for d in all_digests:
        by_gpu[d["gpu"]].append(d)
    for gpu, mine in by_gpu.items():
        write_page("history.html.j2", out_dir / _history_page(gpu), gpu=gpu, index_href=INDEX,
                   **history.history(mine, gpu))
    # Per GPU and op, the newest finished run that covers the op's largest size (history.cross_gpu).
    write_page("gpus.html.j2", out_dir / "gpus.html", index_href=INDEX, **history.cross_gpu(by_gpu))


def _groups(entries) -> list[dict]:
    by_gpu = defaultdict(list)
    for e in entries:
        by_gpu[e.digest["gpu"]].append(dict(e.digest, source=str(e.path)))
    return [{"gpu": gpu, "history": _history_page(gpu), "runs": list(reversed(mine))} for gpu, mine in sorted(by_gpu.items())]


def _history_page(gpu: str) -> str:
    return f"history-{gpu_slug(gpu)}.html"


def nameable(run_id) -> bool:
    """Whether a run id can name a page and be written in one: text that UTF-8 can hold (a JSON
    header may carry a lone surrogate, which no page can be written in)."""
    if not isinstance(run_id, str):
        return False
    try:
        run_id.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def page_name(run_id: str) -> str:
    """The file name (without .html) of a run's page: distinct for distinct run ids (two runs never
    share a page), at most 80 characters, and inside the site (a run file's header is data, and
    could say '../../x'). A plain lowercase run id is its own name; any other is a prefix of its
    safe characters and '--' with 10 hex digits of the sha256 of the whole id. A plain name never
    ends in that pattern, so the two kinds cannot meet, nor on a file system that ignores case."""
    if PLAIN_NAME.fullmatch(run_id) and not HASHED_NAME.search(run_id) and run_id.split(".")[0] not in WINDOWS_DEVICES:
        return run_id
    prefix = re.sub(r"[^A-Za-z0-9._-]", "_", run_id[:PREFIX_CHARS]).lstrip(".")
    digest = hashlib.sha256(run_id.encode("utf-8")).hexdigest()[:10]
    return f"{prefix or 'run'}--{digest}"
