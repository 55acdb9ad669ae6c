"""Where runs live: <output>/<gpu>/<run>.jsonl; commands take files, folders or globs; baselines and
references are kept compressed; check names the variants whose code changed."""

import gzip
import json
import shutil

import pytest

from primbench.errors import UserError
from primbench.runfile import locations
from tests.conftest import RUNS
from tests.unit.conftest import forked_cli


def test_a_new_run_goes_into_a_folder_of_its_gpu_model(tmp_path):
    assert locations.new_run_path(tmp_path, "NVIDIA H200", "r1") == tmp_path / "nvidia-h200" / "r1.jsonl"


def test_files_folders_and_globs_name_runs_in_start_order(tmp_path):
    for gpu, name in (("nvidia-h200", "2026-01-02-b"), ("nvidia-h100", "2026-01-01-a"), ("nvidia-h200", "2026-01-03-c")):
        (tmp_path / gpu).mkdir(exist_ok=True)
        (tmp_path / gpu / f"{name}.jsonl").write_text("{}\n")
    (tmp_path / "notes.txt").write_text("not a run")
    assert [p.name for p in locations.runs_in(tmp_path)] == ["2026-01-01-a.jsonl", "2026-01-02-b.jsonl", "2026-01-03-c.jsonl"]
    assert [p.name for p in locations.runs_in(f"{tmp_path}/nvidia-h200/*.jsonl")] == ["2026-01-02-b.jsonl", "2026-01-03-c.jsonl"]
    assert locations.newest_run_in(tmp_path).name == "2026-01-03-c.jsonl"
    assert locations.runs_in(tmp_path / "one.jsonl") == [tmp_path / "one.jsonl"]  # load_run judges a file
    with pytest.raises(UserError, match="no run files"):
        locations.runs_in(_empty(tmp_path))
    with pytest.raises(UserError, match="matches no run file"):
        locations.runs_in(f"{tmp_path}/*/nothing-*.jsonl")


def _empty(tmp_path):
    folder = tmp_path / "empty"
    folder.mkdir()
    return folder


def _cli(cwd, *args):
    return forked_cli(cwd, *args)  # tests/unit/conftest.py: the command line in a forked child


def test_baseline_and_reference_are_kept_compressed_and_check_finds_them(tmp_path):
    run = RUNS / "fixture-a.jsonl.gz"
    made = _cli(tmp_path, "baseline", run)
    assert made.returncode == 0, made.stderr
    kept = tmp_path / "results" / "baselines" / "nvidia-h200.jsonl.gz"
    assert gzip.decompress(kept.read_bytes()) == gzip.decompress(run.read_bytes())
    reference = _cli(tmp_path, "baseline", run, "--folder", "results/reference")
    assert reference.returncode == 0 and (tmp_path / "results" / "reference" / "nvidia-h200.jsonl.gz").exists()
    checked = _cli(tmp_path, "check", RUNS / "fixture-b.jsonl.gz")  # the default baseline: results/baselines/<gpu>
    assert checked.returncode == 0 and "check: 0 regression(s)" in checked.stdout, checked.stdout + checked.stderr


def test_a_baseline_made_before_compression_is_still_found(tmp_path):
    legacy = tmp_path / "nvidia-h200.jsonl"
    legacy.write_text("{}\n")
    assert locations.baseline_path("NVIDIA H200", tmp_path) == legacy
    assert locations.baseline_path("NVIDIA H100", tmp_path) == tmp_path / "nvidia-h100.jsonl.gz"


def test_check_names_the_variants_whose_code_changed_since_the_baseline(tmp_path):
    lines = gzip.decompress((RUNS / "fixture-b.jsonl.gz").read_bytes()).decode().splitlines()
    header = json.loads(lines[0])
    header["variants"]["scan/decoupled_lookback"]["hash"] = "0" * 16  # test-only: as if its kernel changed
    changed = tmp_path / "changed.jsonl"
    changed.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    result = _cli(tmp_path, "check", changed, "--baseline", RUNS / "fixture-a.jsonl.gz")
    assert "code changed since the baseline: 1 variant(s): scan/decoupled_lookback" in result.stdout, result.stdout


def test_report_and_compare_take_a_folder_of_runs(tmp_path):
    folder = tmp_path / "results" / "nvidia-h200"
    folder.mkdir(parents=True)
    for name in ("fixture-a", "progression"):
        shutil.copy(RUNS / f"{name}.jsonl.gz", folder / f"{name}.jsonl.gz")
    reports = _cli(tmp_path, "report", tmp_path / "results")
    assert reports.returncode == 0, reports.stderr
    assert sorted(p.name for p in folder.glob("*.html")) == ["fixture-a.html", "progression.html"]
    one_file = _cli(tmp_path, "report", tmp_path / "results", "-o", tmp_path / "x.html")
    assert one_file.returncode == 2 and "-o names one file" in one_file.stderr
    compared = _cli(tmp_path, "compare", RUNS / "fixture-b.jsonl.gz", folder)
    assert compared.returncode == 0 and compared.stdout.count("baseline: ") == 2, compared.stderr


def test_publish_lists_a_run_once_beside_its_baseline_and_reference_copies(tmp_path):
    for folder in ("runs", "runs/baselines", "runs/reference"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(RUNS / "progression.jsonl.gz", tmp_path / folder / "progression.jsonl.gz")
    site = _cli(tmp_path, "publish", tmp_path / "runs", "-o", tmp_path / "site")
    assert site.returncode == 0, site.stderr
    assert len(list((tmp_path / "site" / "runs").glob("*.html"))) == 1
