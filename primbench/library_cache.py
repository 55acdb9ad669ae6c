"""A library's built algorithms kept between processes, where the library lets them be: cuda.compute
(pip cuda-cccl) JIT-compiles each operator for its dtypes on first use and keeps the result for the
process only (its default backend has no cache on disk; the HostJIT backend keeps only precompiled
headers, under $XDG_CACHE_HOME/cccl), but `cuda.compute.serialize` turns a built algorithm into
bytes that `deserialize` loads without compiling. primbench keeps those bytes under the user's
cache folder, one file per library version, GPU architecture and specialisation:

    $PRIMBENCH_CACHE_DIR, else $XDG_CACHE_HOME/primbench, else ~/.cache/primbench
        /<library>-<version>/<key digest>.bin

PRIMBENCH_LIBRARY_CACHE=0 turns it off. A file that cannot be read, written or loaded is rebuilt
from the library, never an error: the cache can only save time. tools/probe/library_jit.py
measures what it saves.
"""

from __future__ import annotations

import collections
import hashlib
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

# Built in this process: (library identity, key) -> the algorithm (the library's own process cache
# would answer too, but the disk is read once per process, not once per plan).
_BUILT: dict[tuple, Any] = {}
# The last answers of built() in this process: key, where it came from, seconds it took
# (tools/probe/library_jit.py reads them; bounded, as a long run prepares thousands of plans).
HISTORY: collections.deque = collections.deque(maxlen=4096)


def cache_root() -> Path | None:
    """Where built algorithms are kept, or None when the cache is off."""
    if os.environ.get("PRIMBENCH_LIBRARY_CACHE", "").strip().lower() in ("0", "off", "false", "no"):
        return None
    explicit = os.environ.get("PRIMBENCH_CACHE_DIR", "").strip()
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return Path(xdg) / "primbench" if xdg else Path.home() / ".cache" / "primbench"


def entry_path(identity: str, key: tuple) -> Path | None:
    """The file of one built algorithm ('cuda-cccl 1.2.1' and its specialisation key), or None when off."""
    root = cache_root()
    if root is None:
        return None
    digest = hashlib.sha256(repr(key).encode()).hexdigest()[:24]
    return root / identity.replace(" ", "-") / f"{digest}.bin"


def built(identity: str, key: tuple, build: Callable[[], Any], serialize: Callable[[Any], bytes] | None = None,
          deserialize: Callable[[bytes], Any] | None = None) -> tuple[Any, str]:
    """(the algorithm for `key`, where it came from: "process", "disk" or "built"): from this
    process, else loaded from the cache folder, else `build()`, then saved there. `key` must say
    everything the build depends on (operator, dtypes, options, the GPU's architecture)."""
    memo = (identity, key)
    started = time.perf_counter()
    if memo in _BUILT:
        source, algorithm = "process", _BUILT[memo]
    else:
        path = entry_path(identity, key) if serialize and deserialize else None
        algorithm, source = (_load(path, deserialize) if path else None), "disk"
        if algorithm is None:
            algorithm, source = build(), "built"
            if path:
                _save(path, serialize, algorithm)
        _BUILT[memo] = algorithm
    HISTORY.append({"identity": identity, "key": key, "source": source, "seconds": time.perf_counter() - started})
    return algorithm, source


def _load(path: Path, deserialize) -> Any | None:
    try:
        return deserialize(path.read_bytes()) if path.is_file() else None
    except Exception:  # noqa: BLE001 (damaged, or from a build the library no longer reads: rebuild)
        return None


def _save(path: Path, serialize, algorithm) -> None:
    """Written to a temporary file then renamed, so that a reader never sees half a file."""
    temporary = None
    try:
        blob = serialize(algorithm)
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(blob)
        os.replace(temporary, path)
    except Exception:  # noqa: BLE001 (a read-only home, a full disk, a backend that cannot serialize: keep going)
        if temporary:
            Path(temporary).unlink(missing_ok=True)


def forget() -> None:
    """Drop what this process built (tests, and the probe's cold measurements)."""
    _BUILT.clear()
    HISTORY.clear()
