"""Where primbench's own files are, and how a child process it starts finds this same primbench:
from any working folder, whether primbench is installed or run from a clone."""

import os
import subprocess
import sys
from pathlib import Path

import primbench
from primbench.resources import IMPORT_ROOT, child_environment


def test_the_import_root_is_the_folder_that_holds_the_package():
    assert (IMPORT_ROOT / "primbench" / "__init__.py").resolve() == Path(primbench.__file__).resolve()


def test_a_child_started_elsewhere_imports_this_primbench(tmp_path):
    probe = "import primbench, primbench.run.worker, primbench.profile.child; print(primbench.__file__)"
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=child_environment(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert os.path.samefile(done.stdout.strip(), primbench.__file__)


def test_the_child_environment_keeps_the_callers_pythonpath_and_settings():
    env = child_environment({"PYTHONPATH": os.pathsep.join(["/a", str(IMPORT_ROOT), "/b"]), "HOME": "/h"}, CUDA_VISIBLE_DEVICES="1")
    assert env["PYTHONPATH"].split(os.pathsep) == [str(IMPORT_ROOT), "/a", "/b"]  # first, and once
    assert env["HOME"] == "/h" and env["CUDA_VISIBLE_DEVICES"] == "1"
    assert child_environment({})["PYTHONPATH"] == str(IMPORT_ROOT)


def test_from_a_clone_the_hints_name_make_targets_and_elsewhere_the_command(monkeypatch, tmp_path):
    from primbench import resources
    from primbench.measuring.device import no_gpu_hint

    assert resources.in_a_clone()  # the tests run from the checkout
    assert no_gpu_hint().endswith("render the bundled one: make report")
    monkeypatch.setattr(resources, "IMPORT_ROOT", tmp_path)  # as site-packages looks: no Makefile beside it
    assert not resources.in_a_clone()
    assert no_gpu_hint().endswith("render the bundled one: primbench report --reference")


def test_report_reference_renders_the_bundled_run_into_the_current_folder(tmp_path, monkeypatch, capsys):
    from primbench.cli.main import main

    monkeypatch.chdir(tmp_path)
    assert main(["report", "--reference"]) == 0
    assert (tmp_path / "nvidia-h200.html").stat().st_size > 100_000
    assert main(["report"]) == 2 and "--reference" in capsys.readouterr().err
