"""Every variant primbench can run: the built-in ones (kernels/<module>.py, imported on first use)
and those a plugin registers (a user's Python file beside its own CUDA source)."""

from __future__ import annotations

import fnmatch
import hashlib
import importlib
import importlib.util
import sys
import traceback
from pathlib import Path

from primbench import declarations, pathnames, plugin_import
from primbench.build import HARNESS_KERNELS, HARNESS_SOURCE
from primbench.declarations import DeclarationError
from primbench.errors import UserError
from primbench.resources import KERNEL_DIR
from primbench.variant import Variant

_REGISTRY: dict[str, Variant] = {}
_LOADED = False
_PLUGINS: dict[Path, str] = {}  # plugin file -> the module name it was loaded as
_FROM_PLUGIN: dict[str, Path] = {}  # variant key -> the plugin file that registered it
_LOADING: list[Path] = []  # the plugin being imported, while it is


def register(variant: Variant) -> Variant:
    """Add `variant` (register_variant), with its names, block sizes and source checked
    (declarations.py); returns the variant as registered (a plugin's relative source made absolute)."""
    if not isinstance(variant, Variant):
        raise DeclarationError(f"register_variant takes a Variant, not {type(variant).__name__}")
    plugin = _LOADING[-1] if _LOADING else None
    variant = declarations.checked_variant(variant, plugin, KERNEL_DIR)
    if variant.key in _REGISTRY:
        raise DeclarationError(f"variant {variant.key} registered twice; give it a name of its own")
    where = f"plugin {pathnames.shown(plugin)}: " if plugin else ""
    declarations.warn_if_alike("variant", variant.key, [v.key for v in _REGISTRY.values() if v.op == variant.op], where)
    _REGISTRY[variant.key] = variant
    if plugin is not None:
        _FROM_PLUGIN[variant.key] = plugin
    return variant


def plugin_of(variant: Variant) -> Path | None:
    """The plugin file that registered `variant`; None for a built-in one."""
    return _FROM_PLUGIN.get(variant.key)


def _load() -> None:
    global _LOADED
    if not _LOADED:
        _LOADED = True
        import pkgutil

        import primbench.kernels

        # Every module of kernels/ declares variants: a new op's kernels/<op>.py needs no list.
        for module in sorted(m.name for m in pkgutil.iter_modules(primbench.kernels.__path__)):
            importlib.import_module(f"primbench.kernels.{module}")


def ops() -> list[str]:
    _load()
    return sorted({v.op for v in _REGISTRY.values()})


def variants(op: str | None = None) -> list[Variant]:
    """Every registered variant (of one op), in progression order."""
    _load()
    chosen = [v for v in _REGISTRY.values() if op is None or v.op == op]
    return sorted(chosen, key=lambda v: (v.op, v.order, v.name))


def get(op: str, name: str) -> Variant:
    _load()
    return _REGISTRY[f"{op}/{name}"]


def select(op: str, pattern: str) -> list[Variant]:
    """Variants of `op` whose name matches a name or a glob."""
    return [v for v in variants(op) if fnmatch.fnmatchcase(v.name, pattern)]


def sources() -> dict[str, list[str]]:
    """Every CUDA source file and the name expressions compiled from it."""
    result: dict[str, list[str]] = {HARNESS_SOURCE: list(HARNESS_KERNELS)}
    for variant in variants():
        if variant.source:
            result.setdefault(variant.source, [])
            for name in variant.kernels:
                if name not in result[variant.source]:
                    result[variant.source].append(name)
    return result


def plugins() -> list[Path]:
    """The plugin files loaded in this process, in load order."""
    return list(_PLUGINS)


def load_plugin(path) -> Path:
    """Import a plugin file (its module-level `register` calls add variants, or an op with its
    checks). Loading the same file twice does nothing. Any failure is one UserError line; so is a
    KeyboardInterrupt the plugin raises itself, while a real Ctrl-C stays a KeyboardInterrupt."""
    path = _plugin_file(path)
    if path in _PLUGINS:
        return path
    if path in _LOADING:  # plugins that load each other: the second load would start the first again
        chain = " -> ".join(pathnames.shown(p.name) for p in [*_LOADING[_LOADING.index(path):], path])
        raise UserError(f"plugin {pathnames.shown(path)}: loaded again while it is still loading ({chain}); "
                        "plugins must not load each other: name each once with --plugin")
    _load()  # built-ins first, so that a plugin's name clash is reported against them
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:8]
    name = f"primbench_plugin_{path.stem.replace('-', '_')}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    _LOADING.append(path)
    from primbench import ops

    before = (dict(_REGISTRY), ops.declared_ops())
    watch = plugin_import.CtrlC()
    try:
        with plugin_import.importing(path) as watch:
            spec.loader.exec_module(module)
            _check_ops_declared(path, ops.declared_ops())
    except BaseException as exc:  # noqa: BLE001 (a user's file can raise anything; SystemExit too)
        # Nothing of a plugin that failed stays registered: loading it again reports the same cause.
        sys.modules.pop(name, None)
        _REGISTRY.clear()
        _REGISTRY.update(before[0])
        ops.forget_all_but(before[1])
        for key in [k for k, file in _FROM_PLUGIN.items() if file == path]:
            del _FROM_PLUGIN[key]
        if isinstance(exc, UserError) or (isinstance(exc, KeyboardInterrupt) and watch.arrived):
            raise
        raise UserError(f"plugin {pathnames.shown(path)}: {_where(exc, path)}{_what_went_wrong(exc)}") from None
    finally:
        _LOADING.pop()
    _PLUGINS[path] = name
    return path


def _check_ops_declared(plugin: Path, declared) -> None:
    """Each variant the plugin registered computes an op that is declared (a built-in one, one the
    plugin registers, or one a plugin loaded before it registered): else its cases would have no
    inputs, reference or checks."""
    for key, file in _FROM_PLUGIN.items():
        op = _REGISTRY[key].op
        if file == plugin and op not in declared:
            raise DeclarationError(f"variant {key}: no op {op} is declared; use one of {', '.join(declared)}, "
                                   f"declare it in the plugin with register_op(OpChecks(op={op!r}, ...)), or load the "
                                   "plugin that declares it first (an earlier --plugin, or earlier in plugins:)")


def _plugin_file(path) -> Path:
    """The plugin's resolved path, once it is known to be a .py file."""
    path = Path(path).expanduser()
    kind = pathnames.kind_of(path)  # a name too long to look up is one line, too
    if kind != pathnames.FILE:
        what = {None: "no such file", pathnames.FOLDER: "is a folder"}.get(kind) \
            or f"is {pathnames.special_kind(path)}, not a regular file"
        raise UserError(f"plugin {pathnames.shown(path)}: {what}; give the Python file that registers your variants "
                        "(see docs/extending.md)")
    if path.suffix != ".py":
        raise UserError(f"plugin {pathnames.shown(path)}: is not a .py file; a plugin is Python that registers variants "
                        "(see docs/extending.md)")
    return path.resolve()


def _what_went_wrong(exc: BaseException) -> str:
    if isinstance(exc, DeclarationError):  # primbench's own words: the rule broken and how to fix it
        return str(exc)[:300]
    if isinstance(exc, KeyboardInterrupt):
        return ("raised KeyboardInterrupt while it was imported, with no Ctrl-C pressed; a plugin must not raise it "
                "(fix the plugin)")
    return f"{type(exc).__name__}: {str(exc)[:200]}"


def _where(exc: BaseException, path: Path) -> str:
    """'line N: ' of the plugin's own frame nearest the error (a syntax error carries its line)."""
    if isinstance(exc, SyntaxError) and exc.lineno:
        return f"line {exc.lineno}: "
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == path]
    return f"line {frames[-1].lineno}: " if frames else ""


TRUST_FLAG = "--trust-plugins-from-run"


def check_run_plugins(run_path, recorded, named=(), *, trusted: bool = False) -> None:
    """Refuse, before anything imports them, the plugins a run file's header names (`recorded`, its
    config's `plugins`) unless the user named each again (`named`: the --plugin files) or confirmed
    them (`trusted`: --trust-plugins-from-run). A run file is data: one copied from elsewhere must not
    run Python on this machine because it says so. One UserError line names them and both ways on."""
    if trusted:
        return
    entries = [recorded] if isinstance(recorded, str) else recorded if isinstance(recorded, list) else []
    wanted = {_resolved(p) for p in named or ()}
    # The config loader refuses a list holding anything but paths before it imports any of them.
    unconfirmed = [entry for entry in entries if isinstance(entry, str) and _resolved(entry) not in wanted]
    if not unconfirmed:
        return
    shown = ", ".join(ascii(entry)[:120] for entry in unconfirmed[:3])
    more = f" and {len(unconfirmed) - 3} more" if len(unconfirmed) > 3 else ""
    raise UserError(f"{run_path}: the run names plugin(s) {shown}{more}, which would run as Python here; a run file is "
                    f"data, so they are not imported on its word: name each again with --plugin PATH, or confirm "
                    f"the run's own paths with {TRUST_FLAG}")


def _resolved(path) -> Path | str:
    """A plugin path as the config loader resolves one (relative to the working folder); the text
    itself where it names no path at all (a NUL byte)."""
    try:
        return Path(path).expanduser().resolve()
    except (OSError, ValueError, RuntimeError):
        return str(path)
