"""`primbench ab A --base REV`: variant A as git revision REV declared it, to time against today's.

The variant's own folder (kernels/ for a built-in one, the plugin's folder for a plugin's) is
taken from REV with `git archive` into a temporary folder (at a repository's root, only its top-level files), and the
Python file that declared the variant is imported from there, with these redirected while it runs:
- `register_variant` (and `registry.register`) collects into a private dict, so that the old variant never meets today's
  in the registry (both have the same name) and nothing else REV's file declares is kept;
- `register_op` keeps today's op checks (a plugin that declares its op would declare it twice);
- `KERNEL_DIR` is REV's folder, so that a module reading a constant from its .cu reads REV's.
The old variant's source then names REV's .cu by absolute path: NVRTC compiles it with REV's
headers first on the include path (build._options), and its hash covers REV's text.

Today's op checks (references, tolerances) verify both sides: the question is whether the kernel
changed, against one definition of right.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import io
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from primbench import registry
from primbench.errors import UserError
from primbench.variant import Variant

# Old checkouts stay on disk until the process ends: their .cu files are compiled lazily.
_CHECKOUTS: list[tempfile.TemporaryDirectory] = []


def git(folder: Path, *args: str, binary: bool = False, option: str = "--base"):
    """git's standard output (text, stripped; bytes where `binary`), or None where git says no;
    no git, or a git that hangs, is one line naming `option` (what needed git)."""
    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, timeout=120, check=False)
    except FileNotFoundError:
        raise UserError(f"{option} needs git on the PATH; install git, or compare two variants instead") from None
    except subprocess.TimeoutExpired:
        raise UserError(f"{option}: git {args[0]} took over 120 s in {folder}; is the repository on a slow disk?") from None
    if done.returncode != 0:
        return None
    return done.stdout if binary else done.stdout.decode().strip()


def _declaring_file(variant: Variant) -> Path:
    """The Python file whose register call declared `variant`."""
    plugin = registry.plugin_of(variant)
    if plugin is not None:
        return plugin
    module = sys.modules.get(variant.prepare.__module__)
    if module is None or not getattr(module, "__file__", None):
        raise UserError(f"{variant.key}: cannot tell which file declares it, so --base cannot take it from git")
    return Path(module.__file__).resolve()


def repository_of(variant_key: str, option: str = "--base") -> tuple[Path, Path]:
    """(the root of the git repository that holds the file declaring `variant_key` today, that
    file): where its history is. Refused in one line where it is not one variant today or that file
    is not in a git repository."""
    op, _, name = variant_key.partition("/")
    if op not in registry.ops() or not registry.select(op, name) or any(c in name for c in "*?["):
        raise UserError(f"{option}: {variant_key[:80]} is not one variant today; `primbench list` names them")
    declared_by = _declaring_file(registry.get(op, name))
    root = git(declared_by.parent, "rev-parse", "--show-toplevel", option=option)
    if not root:
        raise UserError(f"{option}: {declared_by.parent} is not in a git repository (an installed primbench has no "
                        "history); run from a git checkout")
    return Path(root).resolve(), declared_by


def commit_in(root: Path, rev: str, option: str = "--base") -> str:
    """The full sha of the commit `rev` names in the repository at `root`; refused in one line."""
    if rev.startswith("-") or not git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", option=option):
        raise UserError(f"{option} {rev[:80]!r}: no such commit in {root}; give a sha, tag or branch (git log lists them)")
    return git(root, "rev-parse", "--verify", f"{rev}^{{commit}}", option=option)


def variant_at(rev: str, variant_key: str, option: str = "--base") -> Variant:
    """`variant_key` (op/name) as revision `rev` of its own git repository declared it. Any failure is one
    UserError line: no git, not a repository, no such revision, no such file or variant at `rev`,
    or a file that no longer loads with this primbench; `option` names `rev` in it ("base" in primbench.ab)."""
    root, declared_by = repository_of(variant_key, option)
    sha = commit_in(root, rev, option)
    folder = declared_by.parent
    inside = folder.relative_to(root).as_posix()
    # A plugin at a repository's root takes only the root's own files, not the whole repository.
    paths = [inside] if inside != "." else (git(root, "ls-tree", "--name-only", sha, option=option) or "").splitlines()
    archive = git(root, "archive", "--format=tar", sha, "--", *paths, binary=True, option=option)
    if archive is None:
        raise UserError(f"{option} {rev[:80]}: {inside}/ did not exist at {sha[:12]}")
    checkout = tempfile.TemporaryDirectory(prefix=f"primbench-base-{sha[:12]}-")
    _CHECKOUTS.append(checkout)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        # Python before 3.11.4 has no extraction filters; the archive is the user's own repository.
        tar.extractall(checkout.name, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    old_folder = Path(checkout.name) / inside
    old_file = old_folder / declared_by.name
    if not old_file.is_file():
        raise UserError(f"{option} {rev[:80]}: {inside}/{declared_by.name} did not exist at {sha[:12]}")
    declared = _import_collecting(old_file, old_folder, sha, option)
    if variant_key not in declared:
        raise UserError(f"{option} {rev[:80]}: {inside}/{declared_by.name} at {sha[:12]} declares no {variant_key[:80]}")
    old = declared[variant_key]
    # A relative source names a file beside the file that declared it (REV's copy), as
    # register_variant resolves a plugin's; a plugin's name found only in the built-in kernels/ is
    # today's kernel (a plugin may reuse a built-in one).
    from primbench.cuda_source import SourceError
    from primbench.resources import KERNEL_DIR

    if old.source is not None and not Path(old.source).is_absolute() and (
            folder == KERNEL_DIR.resolve() or (old_folder / old.source).exists()):
        old = dataclasses.replace(old, source=str(old_folder / old.source))
    if old.source is not None:
        try:
            old.source_text()  # the .cu and every header it includes, as REV had them
        except (OSError, SourceError) as exc:
            missing = getattr(exc, "path", None) or getattr(exc, "filename", None)
            if isinstance(exc, SourceError) and Path(exc.path).exists():
                raise  # there, but no source (a folder, not UTF-8): its own line says so
            missing = Path(missing).name if missing else old.source
            raise UserError(f"{option} {rev[:80]}: {missing} did not exist at {sha[:12]} (commit it, or pick a later "
                            "revision)") from None
    return old


def remove_checkouts() -> None:
    """Remove the old checkouts now: for a process that ends by os._exit (confirm's child), which
    skips the clean-up TemporaryDirectory leaves to the interpreter's exit."""
    while _CHECKOUTS:
        with contextlib.suppress(OSError):  # a folder that will not go is not worth a failed answer
            _CHECKOUTS.pop().cleanup()


@contextlib.contextmanager
def _redirected(old_folder: Path, collected: dict):
    import primbench.api as api

    def collect(variant: Variant) -> Variant:
        collected[variant.key] = variant
        return variant

    def keep_todays_op(checks):  # a plugin's op is declared today already: its checks judge both
        return checks

    saved = (api.register_variant, registry.register, api.register_op, api.KERNEL_DIR)
    api.register_variant, registry.register, api.register_op, api.KERNEL_DIR = collect, collect, keep_todays_op, old_folder
    try:
        yield
    finally:
        api.register_variant, registry.register, api.register_op, api.KERNEL_DIR = saved


def _import_collecting(path: Path, old_folder: Path, sha: str, option: str) -> dict[str, Variant]:
    name = f"primbench_base_{sha[:12]}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    collected: dict[str, Variant] = {}
    sys.modules[name] = module  # dataclasses and inspect look a module up by name while it loads
    with _redirected(old_folder, collected):
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # noqa: BLE001 (old code meets today's API: anything can go wrong)
            del sys.modules[name]
            raise UserError(f"{option} {sha[:12]}: {path.name} of that revision does not load with this primbench "
                            f"({type(exc).__name__}: {str(exc)[:160]}); pick a later revision") from None
    return collected
