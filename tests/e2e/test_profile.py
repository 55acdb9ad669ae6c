"""`primbench profile` end to end without a GPU: a stand-in `ncu` replays a capture from the H200
(tests/data/ncu) in place of profiling, so everything around it runs for real: the request, the
command line, reading ncu's log, the counters file beside the run, merging, the per-case lines."""

import argparse
import json
import os
import shutil
import stat
import textwrap

import pytest

from primbench.cli.profile import cmd_profile
from primbench.errors import UserError
from primbench.profile import capture
from primbench.runfile import counters
from tests.conftest import REPO

DATA = REPO / "tests" / "data" / "ncu"
REFERENCE = REPO / "results" / "reference" / "nvidia-h200.jsonl.gz"


def _stand_in_ncu(folder, capture: str, *, exit_code=0, log_text=None):
    """An executable `ncu` that writes the capture's CSV to --log-file and its manifest where the
    child would, and records the command line it was given."""
    script = folder / "ncu"
    script.write_text(textwrap.dedent(f"""\
        #!/usr/bin/env python3
        import gzip, json, pathlib, shutil, sys
        args = sys.argv[1:]
        with open({str(folder / "argv.jsonl")!r}, "a") as calls:
            calls.write(json.dumps(args) + chr(10))
        if args == ["--version"]:
            print("Version 2025.3.1.0 (stand-in)"); sys.exit(0)
        log = pathlib.Path(args[args.index("--log-file") + 1])
        text = {log_text!r}
        log.write_text(text if text is not None else gzip.decompress(pathlib.Path({str(DATA / (capture + ".csv.gz"))!r}).read_bytes()).decode())
        if text is None:
            shutil.copy({str(DATA / (capture + ".manifest.json"))!r}, args[-1])
        sys.exit({exit_code})
        """))
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def _args(target, **options):
    defaults = dict(target=str(target), only=None, sizes=None, blocks=None, output=None, plugin=None, trust_plugins_from_run=False)
    return argparse.Namespace(**{**defaults, **options})


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    monkeypatch.setattr("primbench.measuring.device.require_gpu", lambda: None)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_HOME", raising=False)
    run = tmp_path / "runs" / REFERENCE.name
    run.parent.mkdir()
    shutil.copy(REFERENCE, run)
    return tmp_path, run


def test_profiling_a_run_writes_its_counters_beside_it_and_merges(stand_in, capsys):
    folder, run = stand_in
    _stand_in_ncu(folder, "progression")
    assert cmd_profile(_args(run, sizes="2^25", only=["reduce/*"], blocks="256")) == 0
    calls = [json.loads(line) for line in (folder / "argv.jsonl").read_text().splitlines()]
    (argv,) = [call for call in calls if call != ["--version"]]
    assert argv[:4] == ["--profile-from-start", "off", "--target-processes", "all"]
    assert argv[argv.index("--metrics") + 1] == ",".join(capture.METRICS.values())
    assert argv[-4:-2] == ["-m", "primbench.profile.child"]
    request = json.loads(open(argv[-2]).read()) if os.path.exists(argv[-2]) else None
    assert request is None  # the scratch folder is gone once the counters are written
    written = counters.counters_path_for(run)
    about, cases = counters.load(written)
    assert about["run"] == run.name and about["ncu"]["version"].startswith("2025.3.1.0")
    assert len(cases) == 20 and all(c.profiled for c in cases)
    out = capsys.readouterr().out
    assert "profile: " in out and "20 of 20 cases profiled" in out and "+2.5% against the declared" in out

    _stand_in_ncu(folder, "fast-2-28")
    cmd_profile(_args(run, sizes="2^28", blocks="256"))
    _, cases = counters.load(written)
    assert len(cases) == 20 + 31  # the first profile's cases are kept


def test_a_permission_error_from_ncu_is_one_line_and_writes_nothing(stand_in):
    folder, run = stand_in
    _stand_in_ncu(folder, "progression", exit_code=1,
                  log_text="==PROF== Connected to process 7\n==ERROR== ERR_NVGPUCTRPERM - The user does not have permission\n")
    with pytest.raises(UserError, match="ERR_NVGPUCTRPERM"):
        cmd_profile(_args(run, sizes="2^25", only=["reduce/*"]))
    assert not counters.counters_path_for(run).exists()


def test_no_ncu_is_one_line(stand_in, monkeypatch):
    folder, run = stand_in
    monkeypatch.setenv("PATH", str(folder / "empty"))
    monkeypatch.setattr(capture.shutil, "which", lambda name: None)
    monkeypatch.setattr(capture, "_usual_places", lambda: ())
    with pytest.raises(UserError, match="ncu.*not installed"):
        cmd_profile(_args(run, sizes="2^25", only=["reduce/*"]))


def test_an_output_that_is_not_a_counters_file_is_refused_before_ncu_runs(stand_in):
    folder, run = stand_in
    _stand_in_ncu(folder, "progression")
    target = counters.counters_path_for(run)
    target.write_text("my notes, not counters\n")
    with pytest.raises(UserError, match="not a primbench counters file"):
        cmd_profile(_args(run, sizes="2^25", only=["reduce/*"]))
    assert target.read_text() == "my notes, not counters\n" and not (folder / "argv.jsonl").exists()


def test_counters_from_another_ncu_are_replaced_not_merged(stand_in, capsys):
    folder, run = stand_in
    _stand_in_ncu(folder, "progression")
    cmd_profile(_args(run, sizes="2^25", only=["reduce/*"], blocks="256"))
    written = counters.counters_path_for(run)
    doc = json.loads(written.read_text())
    doc["ncu"]["version"] = "2023.1"
    written.write_text(json.dumps(doc))
    _stand_in_ncu(folder, "fast-2-28")
    cmd_profile(_args(run, sizes="2^28", blocks="256"))
    _, cases = counters.load(written)
    assert len(cases) == 31 and "replaced, not merged" in capsys.readouterr().out


def test_a_run_from_another_gpu_model_is_refused(stand_in):
    folder, run = stand_in
    _stand_in_ncu(folder, "progression")
    import gzip

    lines = gzip.decompress(run.read_bytes()).decode().splitlines()
    header = json.loads(lines[0])
    header["device"]["name"] = "NVIDIA A100-SXM4-80GB"
    other = run.with_name("a100.jsonl")
    other.write_text("\n".join([json.dumps(header)] + lines[1:]) + "\n")
    with pytest.raises(UserError, match="measured on NVIDIA A100.*nothing written"):
        cmd_profile(_args(other, sizes="2^25", only=["reduce/*"], blocks="256"))
    assert not counters.counters_path_for(other).exists()
