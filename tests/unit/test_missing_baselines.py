"""primbench/report/missing_baselines.py: from a run alone, the baselines it could not time because
their library was missing (a header naming each library variant's package, the skip reasons its
cases carry), and the report's line for each package."""

import json
import sys
import types

from primbench import registry
from primbench.libraries import CUDA_CCCL, Library
from primbench.runfile.case_id import CaseId
from primbench.runfile.records import CaseRecord


def _run(variants: dict, cases: list):
    return types.SimpleNamespace(header=types.SimpleNamespace(variants=variants), cases=cases)


def _skipped(op, variant, reason, n=2**20):
    return CaseRecord(CaseId(op, variant, "float32", n, None, "uniform"), status="skipped", reason=reason)


def test_the_report_lists_the_baselines_a_missing_library_kept_out():
    from primbench.report.missing_baselines import missing_baselines

    missing = CUDA_CCCL.install
    reason = f"cuda-cccl is not installed, so its baselines are skipped: {missing}"
    variants = {key: registry.get(*key.split("/")).describe() for key in
                ("reduce/cccl_reduce", "scan/cccl_inclusive_scan", "topk/torch_topk", "reduce/vector_load_sum")}
    variants["reduce/cccl_reduce"]["library"]["version"] = None
    cases = [_skipped("reduce", "cccl_reduce", reason), _skipped("reduce", "cccl_reduce", reason, 2**22),
             _skipped("scan", "cccl_inclusive_scan", reason),
             _skipped("topk", "torch_topk", "torch.topk needs more GPU memory"),  # skipped for another reason
             CaseRecord(CaseId("reduce", "vector_load_sum", "float32", 2**20, 256, "uniform"))]
    (found,) = missing_baselines(_run(variants, cases))
    assert found.package == "cuda-cccl" and found.variants == ("reduce/cccl_reduce", "scan/cccl_inclusive_scan")
    assert found.cases == 3 and found.reason == reason
    assert found.line.startswith("cuda-cccl: 2 baseline(s) not timed (reduce/cccl_reduce, scan/cccl_inclusive_scan; 3 cases)")
    assert missing_baselines(_run(variants, cases[3:])) == []


def test_a_report_of_a_run_without_cuda_cccl_says_which_baselines_it_lacks(newest_run, tmp_path, monkeypatch):
    from primbench.report.render import render_report
    from primbench.runfile.io import record_line

    monkeypatch.setitem(sys.modules, "cuda.compute", None)
    monkeypatch.setattr(Library, "version", lambda self: None)
    records = [json.loads(line) for line in newest_run.read_text(encoding="utf-8").splitlines() if line.strip()]
    header, *rest = records
    header["variants"]["reduce/cccl_reduce"] = registry.get("reduce", "cccl_reduce").describe()
    skipped = _skipped("reduce", "cccl_reduce", CUDA_CCCL.unavailable(), 2**20)
    for record in rest:
        if record["kind"] == "end":
            record["skipped"] += 1
    lines = [header, *[r for r in rest if r["kind"] != "end"], json.loads(record_line(skipped)), *[r for r in rest if r["kind"] == "end"]]
    path = tmp_path / newest_run.name
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    html = render_report(path, tmp_path / "report.html").read_text(encoding="utf-8")
    assert 'id="missing-baselines"' in html
    assert "cuda-cccl: 1 baseline(s) not timed (reduce/cccl_reduce; 1 cases)" in html and "pip install" in html
