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
