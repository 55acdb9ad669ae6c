"""primbench installs as a tool: `pip install <checkout>` and `pip install -e <checkout>` into a fresh
virtual environment give one package, `primbench`, and a `primbench` command that works from any
folder (list, compile with NVRTC, report a real run), with no top-level `kernels` package."""

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

# The venv sees the test interpreter's packages through a .pth file (numpy, cupy, ...), so that pip
# finds every dependency installed and downloads none of them; pip builds primbench from the
# checkout in its usual isolated build environment (setuptools from the package index). The venv
# gets no pip of its own: the test interpreter's pip installs into it (`pip --python`, pip 22.3+),
# which spares ensurepip's 3.7 s per venv and installs the same files.


def _venv(tmp_path: Path) -> Path:
    folder = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(folder)
    python = folder / "bin" / "python"
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "test_interpreter.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def _install(python: Path, repo: Path, *extra: str) -> None:
    result = subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "-q", *extra, str(repo)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]


def _nvrtc_env() -> dict:
    # NVRTC from pip (nvidia-cuda-nvrtc) is looked up in the venv's own site-packages, which the
    # .pth file does not extend: point the loader at the test interpreter's copy.
    libraries = [str(p.parent) for p in Path(sysconfig.get_paths()["purelib"]).glob("nvidia/*/lib/libnvrtc.so*")]
    return dict(os.environ, LD_LIBRARY_PATH=":".join([*libraries, os.environ.get("LD_LIBRARY_PATH", "")]))


def _primbench(python: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([python.parent / "primbench", *args], cwd=cwd, capture_output=True, text=True, timeout=600,
                          env=_nvrtc_env())


@pytest.fixture(scope="module")
def installed(repo, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("install")
    python = _venv(tmp)
    _install(python, repo)
    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir()
    return python, elsewhere


def test_the_installed_command_runs_from_another_folder(installed, repo):
    python, elsewhere = installed
    for args in (("--help",), ("--version",), ("run", "--help")):
        result = _primbench(python, elsewhere, *args)
        assert result.returncode == 0, result.stderr
    listing = _primbench(python, elsewhere, "list")
    assert listing.returncode == 0, listing.stderr
    assert "reduce/reduce0_interleaved_divergent" in listing.stdout and "scan/cub_inclusive_scan" in listing.stdout
    module = subprocess.run([python, "-m", "primbench", "--version"], cwd=elsewhere, capture_output=True, text=True)
    assert module.returncode == 0 and module.stdout.startswith("primbench "), module.stderr


def test_the_installed_package_holds_every_kernel_source_and_compiles_from_it(installed, repo):
    # Every .cu/.cuh the clone has, byte for byte: test_kernels_compile compiles each of those for
    # sm_90 and sm_80, so one compile here (scan.cu and common.cuh, its 22 kernels) proves the path.
    python, elsewhere = installed
    probe = "import pathlib, primbench.kernels as k; print(pathlib.Path(k.__file__).parent)"
    found = subprocess.run([python, "-c", probe], cwd=elsewhere, capture_output=True, text=True)
    assert found.returncode == 0, found.stderr
    installed_kernels = Path(found.stdout.strip())
    sources = lambda folder: {p.name: p.read_bytes() for p in folder.iterdir() if p.suffix in (".cu", ".cuh")}
    assert sources(installed_kernels) == sources(repo / "kernels")
    compiled = subprocess.run([python, "-c", "from primbench import registry; from primbench.build import compile_for_arch, require_nvrtc; require_nvrtc(); "
                               "print(compile_for_arch('scan.cu', registry.sources()['scan.cu'], 'sm_90').cubin_bytes)"],
                              cwd=elsewhere, capture_output=True, text=True, env=_nvrtc_env())
    assert compiled.returncode == 0, compiled.stderr
    assert int(compiled.stdout) > 100_000


def test_the_installed_package_reports_a_real_run_and_dry_runs_a_bundled_config(installed, newest_run):
    python, elsewhere = installed
    out = elsewhere / "report.html"
    result = _primbench(python, elsewhere, "report", str(newest_run), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "reduce0_interleaved_divergent" in out.read_text()
    dry = _primbench(python, elsewhere, "run", "configs/progression.yaml", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "cases in" in dry.stdout.splitlines()[-1]


def test_the_install_holds_one_package_and_no_top_level_kernels(installed):
    python, elsewhere = installed
    probe = ("import importlib.util, pathlib, primbench, primbench.kernels; "
             "print(importlib.util.find_spec('kernels')); print(pathlib.Path(primbench.__file__).parent.parent)")
    result = subprocess.run([python, "-c", probe], cwd=elsewhere, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    spec, site = result.stdout.split()
    assert spec == "None"
    assert "site-packages" in site
    installed_files = {p.name for p in (Path(site) / "primbench" / "kernels").iterdir()}
    assert {"reduce.cu", "common.cuh", "harness.cu", "reduce.py"} <= installed_files
    assert (Path(site) / "primbench" / "report_templates" / "report.html.j2").is_file()
    assert (Path(site) / "primbench" / "reference" / "published.json").is_file()
    assert (Path(site) / "primbench" / "reference" / "nvidia-h200.jsonl.gz").is_file()  # the reference run


def test_a_pip_user_renders_the_bundled_reference_run_and_is_told_the_command_they_have(installed):
    python, elsewhere = installed
    result = _primbench(python, elsewhere, "report", "--reference")
    assert result.returncode == 0, result.stderr
    page = elsewhere / "nvidia-h200.html"
    assert result.stdout.strip() == "nvidia-h200.html" and "reduce0_interleaved_divergent" in page.read_text()
    hint = subprocess.run([python, "-c", "from primbench.measuring.device import no_gpu_hint; print(no_gpu_hint())"],
                          cwd=elsewhere, capture_output=True, text=True)
    assert hint.stdout.strip().endswith("render the bundled one: primbench report --reference"), hint


def test_an_editable_install_runs_from_another_folder(repo, tmp_path):
    python = _venv(tmp_path)
    _install(python, repo, "-e")
    listing = _primbench(python, tmp_path, "list", "--op", "scan")
    assert listing.returncode == 0, listing.stderr
    assert "scan/decoupled_lookback" in listing.stdout


def test_the_package_map_in_pyproject_is_the_one_a_checkout_uses(repo):
    import tomllib

    import primbench

    package_dir = tomllib.loads((repo / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    assert {name: folder for name, folder in package_dir.items() if name != "primbench"} == primbench.CHECKOUT_PACKAGES
