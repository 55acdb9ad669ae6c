"""The library series (primbench/variant.py LIBRARY_SERIES): a variant declared with its former
name, "baseline", is the library's, and a run file written with it reads as the library
(runfile/records.py `migrate`), the file itself unchanged."""

from __future__ import annotations

from pathlib import Path

from primbench.runfile.io import load_run
from primbench.variant import LIBRARY_SERIES

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "results" / "reference" / "nvidia-h200.jsonl.gz"


def test_a_run_written_with_the_former_series_name_reads_as_the_library():
    import gzip
    import json

    run = load_run(REFERENCE)
    written = json.loads(gzip.decompress(REFERENCE.read_bytes()).decode().splitlines()[0])["variants"]
    former = {key for key, info in written.items() if info["series"] == "baseline"}
    assert len(former) == 5  # CuPy's CUB for reduce, max, scan and histogram, and the full sort
    assert {run.header.variants[key]["series"] for key in former} == {LIBRARY_SERIES}
    assert all(run.header.variants[key]["series"] == info["series"] for key, info in written.items() if key not in former)


def test_a_variant_declared_with_the_former_series_name_is_the_librarys():
    from primbench import registry
    from primbench.variant import Variant

    library = [v for v in registry.variants() if v.series == LIBRARY_SERIES]
    assert library and all(v.traffic in ("read", "read_write") for v in library)  # each has a light
    renamed = Variant(op="reduce", name="x", origin="o", series="baseline", order=1, prepare=None, block_sizes=(),
                      bytes_model="n * itemsize", tolerance_model="t", deterministic_expected=True)
    assert renamed.series == LIBRARY_SERIES
