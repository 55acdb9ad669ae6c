"""publish renders a run's page again only when something it is made from changed: the run file's
bytes, primbench's code, templates and published figures, or the plugin files given with --plugin.
A year of nightly runs then costs one render per new run, not one per run per publish (a render
takes 14 to 46 s).

The keys live in <site>/.primbench-pages.json. A missing, unreadable, damaged or foreign cache file
(read_cache_file) only means every page is rendered again."""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path

from primbench import progress
from primbench.errors import UserError
from primbench.outputs import write_own_file
from primbench.resources import IMPORT_ROOT, PUBLISHED_FIGURES, TEMPLATE_DIR
from primbench.version import __version__

CACHE_NAME = ".primbench-pages.json"
RENDERING_LIBRARIES = ("matplotlib", "pandas", "numpy", "jinja2", "markupsafe")
PACKAGE = IMPORT_ROOT / "primbench"  # the code every page is rendered with: code_fingerprint hashes it


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """sha256 of everything a page is rendered with, besides the run: the package's Python files,
    the templates and stylesheet, the published figures, the version, and the versions of the
    libraries that draw and lay out the page."""
    from importlib import metadata

    digest = hashlib.sha256(__version__.encode())
    for library in RENDERING_LIBRARIES:
        try:
            digest.update(f"{library}={metadata.version(library)}".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{library}=?".encode())
    files = sorted(PACKAGE.rglob("*.py")) + sorted(Path(TEMPLATE_DIR).iterdir()) + [Path(PUBLISHED_FIGURES)]
    for path in files:
        if path.is_file():
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def plugins_fingerprint(plugins) -> str:
    """sha256 of the plugin files publish was given (--plugin): a plugin op's page shows that
    code's sections, so a page drawn without them, or with an older plugin, is drawn again."""
    digest = hashlib.sha256()
    for path in plugins:
        path = Path(path)
        try:
            code = path.read_bytes()
        except OSError as exc:  # gone since it was imported: the page is drawn again, as for a change
            code = f"unreadable: {exc}".encode("utf-8", "backslashreplace")
        digest.update(os.fsencode(str(path)) + b"\0" + code + b"\0")
    return digest.hexdigest() if plugins else ""


def page_key(run_path, plugins_key: str = "") -> str:
    """The run's key: its bytes and its file name (the page shows the name), the code's, and the
    plugins' (`plugins_fingerprint`). The name as the system's bytes: one that is not UTF-8 has no
    str.encode()."""
    run_path = Path(run_path)
    code = code_fingerprint() + plugins_key
    return hashlib.sha256(code.encode() + os.fsencode(run_path.name) + b"\0" + run_path.read_bytes()).hexdigest()


def read_cache_file(path: Path):
    """The JSON a publish cache file holds; None when there is none to read: missing, a folder or
    anything but a plain file (a FIFO would block the read; a link is not one publish wrote, and
    is replaced at the next save), unreadable, not UTF-8, not JSON."""
    try:
        if path.is_symlink() or not path.is_file():
            return None
        return json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError, RecursionError):  # RecursionError: JSON nested thousands deep
        return None


def save_cache_file(path: Path, text: str) -> None:
    """Write a publish cache, replacing whatever is at its name (a link is replaced, never written
    through); one that cannot be written (a folder in its place, a full disk) costs the next
    publish a full read, so it is a warning, not a failed publish."""
    try:
        write_own_file(path, text)
    except UserError as exc:
        progress.say(f"warning: {exc}; the site is published, but the next publish reads every run again")


class PageCache:
    """Which page was rendered from which key, for one site folder."""

    def __init__(self, site: Path):
        self.path = Path(site) / CACHE_NAME
        loaded = read_cache_file(self.path)
        self.keys = {k: v for k, v in loaded.items() if isinstance(v, str)} if isinstance(loaded, dict) else {}

    def fresh(self, page: Path, key: str) -> bool:
        """Whether `page` exists, as the file publish wrote (not a link put in its place), and was
        rendered from `key`."""
        return not page.is_symlink() and page.is_file() and self.keys.get(page.name) == key

    def record(self, page: Path, key: str) -> None:
        self.keys[page.name] = key

    def save(self, pages) -> None:
        """Keep the keys of this publish's `pages` only (a run no longer published drops out)."""
        kept = {page.name for page in pages}
        self.keys = {name: key for name, key in self.keys.items() if name in kept}
        save_cache_file(self.path, json.dumps(self.keys, indent=1, sort_keys=True) + "\n")
