"""primbench/setup_env.py: the venv it makes, what it would install and where (never into the system
python), and its silence when there is nothing to do. Nothing here downloads a package."""

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from primbench import setup_env

REPO = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = Path("/usr/bin/python3")
PLAN = "primbench: would run: "
FAKE = {"primbench_fake_module_a": "fake-a", "primbench_fake_module_b": "fake-b"}  # no such modules anywhere


def _python(python, code: str) -> str:
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def _site_listing(python) -> dict:
    """Every entry of the python's site-packages folders (system and user) with its mtime."""
    code = "import json, site; print(json.dumps(site.getsitepackages() + [site.getusersitepackages()]))"
    listing = {}
    for folder in map(Path, json.loads(_python(python, code))):
        if folder.is_dir():
            listing[str(folder)] = sorted((entry.name, entry.lstat().st_mtime_ns) for entry in folder.iterdir())
    return listing


def _plan(stdout: str) -> list:
    return [shlex.split(line[len(PLAN):]) for line in stdout.splitlines() if line.startswith(PLAN)]


def _installs_into(command: list, python: Path) -> bool:
    """The pip command installs into `python`: it runs it, or names it with pip's --python."""
    if "--python" in command:
        return Path(command[command.index("--python") + 1]) == python
    return Path(command[0]) == python and command[1:3] == ["-m", "pip"]


def _system_site_packages(venv_dir: Path) -> bool:
    config = (venv_dir / "pyvenv.cfg").read_text(encoding="utf-8")
    return re.search(r"(?m)^include-system-site-packages\s*=\s*true\s*$", config) is not None


@pytest.fixture
def system_python():
    if not SYSTEM_PYTHON.exists():
        pytest.skip(f"no {SYSTEM_PYTHON} here")
    stdlib = _python(SYSTEM_PYTHON, "import sysconfig; print(sysconfig.get_path('stdlib'))")
    if not (Path(stdlib) / "EXTERNALLY-MANAGED").is_file():
        pytest.skip(f"{SYSTEM_PYTHON} is not externally managed (no {stdlib}/EXTERNALLY-MANAGED)")
    return SYSTEM_PYTHON


def test_the_system_python_plans_installs_into_the_venv_only(system_python, tmp_path):
    target = tmp_path / "venv"
    before = _site_listing(system_python)

    def dry_run(mode):
        return subprocess.run([str(system_python), "-m", "primbench.setup_env", mode, "--venv", str(target), "--dry-run"],
                              cwd=REPO, capture_output=True, text=True, timeout=120)

    result = dry_run("--report")
    if _python(system_python, "import sys; print(sys.version_info >= (3, 11))") == "False":
        assert result.returncode == 2 and "needs Python 3.11" in result.stderr and result.stderr.count("\n") == 1
        return
    if result.returncode == 2 and setup_env.NO_PIP in result.stderr:
        pytest.skip("this system python has neither ensurepip nor a pip with --python (the one-line message is right)")
    assert result.returncode == 0, result.stderr
    python = setup_env.venv_python(target)
    everything = _plan(result.stdout)
    assert any(command[-2:] == ["-e", str(REPO)] for command in everything), everything  # primbench itself, last
    plan = [command for command in everything if "-e" not in command]
    if plan:  # the system lacks something: a plain venv, and pip only ever aims at its interpreter
        assert not _system_site_packages(target)
        assert all(_installs_into(command, python) for command in plan), plan
    else:
        assert _system_site_packages(target), result.stdout

    test_result = dry_run("--test")  # the same venv, now for `make test`: what CI would install
    assert test_result.returncode == 0, test_result.stderr
    test_plan = _plan(test_result.stdout)
    assert all(_installs_into(command, python) for command in test_plan), test_plan
    if not _system_site_packages(target):
        planned = {part for command in test_plan for part in command}
        assert {"cupy-cuda13x", "pytest", "jsonschema", setup_env.NVRTC} <= planned, test_plan
    assert _site_listing(system_python) == before


@pytest.fixture
def fake_system(monkeypatch):
    """This python as one that imports FAKE (and has no ensurepip, so that making a venv takes no time);
    every subprocess command is recorded."""
    real_find_spec = importlib.util.find_spec
    imports_fake = {"value": True}

    def find_spec(name, *args):
        if name in FAKE:
            return object() if imports_fake["value"] else None
        return None if name == "ensurepip" else real_find_spec(name, *args)

    monkeypatch.setattr(setup_env.importlib.util, "find_spec", find_spec)
    monkeypatch.setattr(setup_env, "BASE", dict(FAKE))
    commands = []
    real_run = subprocess.run

    def run(command, *args, **kwargs):
        commands.append([str(part) for part in command])
        return real_run(command, *args, **kwargs)

    monkeypatch.setattr(setup_env.subprocess, "run", run)
    # primbench's own editable install is tested on its own below; here it is only recorded.
    monkeypatch.setattr(setup_env, "install_editable", lambda venv, dry_run: commands.append(["install_editable", str(venv)]) or 0)
    return imports_fake, commands


def test_a_system_with_everything_gets_a_venv_on_its_site_packages_and_no_install(fake_system, tmp_path, capfd):
    _, commands = fake_system
    target = tmp_path / "venv"
    assert setup_env.main(["--report", "--venv", str(target)]) == 0
    assert _system_site_packages(target)
    assert not any("pip" in command for command in commands), commands
    assert "with the system's site-packages" in capfd.readouterr().out


def test_a_system_without_everything_gets_a_plain_venv_and_pip_aims_at_it(fake_system, tmp_path, capfd):
    imports_fake, commands = fake_system
    imports_fake["value"] = False
    target = tmp_path / "venv"
    assert setup_env.main(["--report", "--venv", str(target), "--dry-run"]) == 0
    assert not _system_site_packages(target)
    plan = _plan(capfd.readouterr().out)
    assert len(plan) == 1 and plan[0][-2:] == ["fake-a", "fake-b"], plan
    assert _installs_into(plan[0], setup_env.venv_python(target.absolute())), plan  # made without pip: --python


def test_a_venv_made_by_a_venv_python_sees_that_venvs_packages(tmp_path):
    """The GPU image's python3 is itself a venv (/opt/torch/.venv) holding CuPy and the rest: the venv
    made from it must import them too, not only its base's site-packages, and install nothing."""
    outer = tmp_path / "outer"
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(str(outer))
    site_dir = Path(_python(setup_env.venv_python(outer), "import sysconfig; print(sysconfig.get_path('purelib'))"))
    (site_dir / "primbench_only_in_outer.py").write_text("")
    target = tmp_path / "venv"
    code = ("import sys; from primbench import setup_env as s; s.BASE = {'primbench_only_in_outer': 'only-in-outer'}; "
            "s.install = lambda venv, packages, dry_run: sys.exit('installs ' + repr(packages)) if packages else 0; "
            "s.install_editable = lambda venv, dry_run: 0; "
            "sys.exit(s.main(sys.argv[1:]))")
    result = subprocess.run([str(setup_env.venv_python(outer)), "-c", code, "--report", "--venv", str(target)],
                            cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert _system_site_packages(target)
    assert _python(setup_env.venv_python(target), "import primbench_only_in_outer as m; print(m.__file__)").startswith(str(site_dir))


def test_a_plain_venv_is_repointed_once_the_system_has_everything(fake_system, tmp_path):
    _, commands = fake_system
    target = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(str(target))
    assert not _system_site_packages(target)
    assert setup_env.main(["--report", "--venv", str(target)]) == 0
    assert _system_site_packages(target)
    assert not any("pip" in command for command in commands), commands


def test_the_fast_path_prints_nothing_and_changes_nothing(monkeypatch, tmp_path, capfd):
    target = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(str(target))
    config = (target / "pyvenv.cfg").stat().st_mtime_ns
    monkeypatch.setattr(setup_env, "BASE", {"json": "json", "sqlite3": "sqlite3"})  # any venv imports these
    monkeypatch.setattr(setup_env, "make_venv", lambda *args, **kwargs: pytest.fail("remade the venv"))
    monkeypatch.setattr(setup_env, "install", lambda *args, **kwargs: pytest.fail("installed something"))
    monkeypatch.setattr(setup_env, "_installed_here", lambda venv: (True, True))  # primbench is in it already
    assert setup_env.main(["--report", "--venv", str(target)]) == 0
    assert capfd.readouterr() == ("", "")
    assert (target / "pyvenv.cfg").stat().st_mtime_ns == config


def test_the_command_line_is_silent_on_a_venv_that_has_everything(capfd):
    """The venv running these tests (`make test` made it) has what --report needs: the real command prints nothing."""
    if sys.prefix == sys.base_prefix or (Path(sys.prefix) / setup_env.FLOORS_STAMP).is_file():
        pytest.skip("the tests do not run in the venv make test made (run them with `make test`)")
    if setup_env.missing_in(sys.executable, setup_env.BASE):
        pytest.skip("this venv lacks some of --report's modules")
    result = subprocess.run([sys.executable, "-m", "primbench.setup_env", "--report", "--venv", sys.prefix],
                            cwd=REPO, capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_every_mode_ends_with_primbench_installed_editable_into_the_venv(fake_system, tmp_path):
    _, commands = fake_system
    target = tmp_path / "venv"
    assert setup_env.main(["--report", "--venv", str(target)]) == 0
    assert commands[-1] == ["install_editable", str(target.absolute())]


def test_the_editable_install_aims_at_the_venv_and_fetches_nothing_the_venv_has(tmp_path, capfd, monkeypatch):
    target = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(str(target))
    monkeypatch.setattr(setup_env, "_installed_here", lambda venv: (False, True))  # not there; setuptools is
    assert setup_env.install_editable(target, dry_run=True) == 0
    (command,) = _plan(capfd.readouterr().out)
    assert _installs_into(command, setup_env.venv_python(target))
    assert command[-3:] == ["--no-build-isolation", "-e", str(REPO)] and "--no-deps" in command
    monkeypatch.setattr(setup_env, "_installed_here", lambda venv: (True, True))
    assert setup_env.install_editable(target, dry_run=True) == 0 and capfd.readouterr() == ("", "")


def test_the_venv_of_make_test_runs_this_checkouts_primbench_from_any_folder(tmp_path):
    """make test installed primbench editable into its venv: the command and `python -m primbench`
    work outside the checkout, and setup_env sees the install as current."""
    if sys.prefix == sys.base_prefix or not (Path(sys.prefix) / setup_env.STAMP).is_file():
        pytest.skip("the tests do not run in the venv make test made (run them with `make test`)")
    assert setup_env._installed_here(Path(sys.prefix))[0]
    for command in ([str(Path(sys.prefix) / "bin" / "primbench"), "--version"], [sys.executable, "-m", "primbench", "--version"]):
        result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0 and result.stdout.startswith("primbench "), (command, result.stderr)


def test_a_package_under_its_floor_counts_as_missing():
    # make test runs --dist worksteal, which pytest-xdist has from 3.2: an older one must be replaced.
    assert setup_env.missing_in(sys.executable, {"pytest": "pytest>=999"}) == ["pytest>=999"]
    assert setup_env.missing_in(sys.executable, {"pytest": "pytest>=1.0", "json": "json"}) == []
    assert setup_env.missing_in(sys.executable, {"primbench_fake_module_a": "fake-a"}) == ["fake-a"]


def test_make_bench_tries_cuda_cccl_once_and_goes_on_without_it(tmp_path, monkeypatch, capfd):
    # The GPU image has no network: a failed install of the optional library is one warning line, the
    # venv stays usable, and the next `make bench` does not try again.
    target = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(str(target))
    package = setup_env.OPTIONAL_GPU_PACKAGE.format(13)
    assert package == "cuda-cccl[minimal-cu13]"
    pip_runs = []
    real_run = subprocess.run

    def run(command, *args, **kwargs):
        if command[0] == "pip":
            pip_runs.append(command)
            return subprocess.CompletedProcess(command, 1)
        return real_run(command, *args, **kwargs)

    monkeypatch.setattr(setup_env, "pip_install", lambda venv: ["pip", "install", "-q"])
    monkeypatch.setattr(setup_env.subprocess, "run", run)
    setup_env.install_optional(target, package, dry_run=True)
    assert _plan(capfd.readouterr().out) == [["pip", "install", "-q", "--retries", "0", "--timeout", "20", package]]
    setup_env.install_optional(target, package, dry_run=False)
    assert pip_runs == [["pip", "install", "-q", "--retries", "0", "--timeout", "20", package]]
    err = capfd.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "could not install cuda-cccl[minimal-cu13]" in err[0] and "baselines will be skipped" in err[0]
    setup_env.install_optional(target, package, dry_run=False)
    assert len(pip_runs) == 1 and capfd.readouterr() == ("", "")
