"""Make the project's virtual environment and install what it lacks, and only that:
`python3 -m primbench.setup_env (--gpu | --test | --compile | --report) [--venv DIR] [--dry-run]`.

Standard library only: it runs under the system python before anything is installed (older than 3.11:
one line, exit 2), and never installs into that python (Debian's is "externally managed", PEP 668):
every pip install goes to the venv's interpreter. Where the python running this already imports all
the mode needs (the GPU image, which has no network), the venv is made with --system-site-packages
(plus a .pth file when that python is itself a venv) and nothing is installed; else it is a plain venv
that pip fills. Last, primbench itself goes in, editable (`pip install --no-deps -e` the checkout), so that
.venv/bin/primbench works from any folder. When the venv has everything already, it does nothing and prints
nothing.
"""

import argparse
import functools
import importlib.util
import os
import re
import shlex
import shutil
import site
import subprocess
import sys
import venv as venv_module
from pathlib import Path
from typing import Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
MIN_PYTHON = (3, 11)
# import name -> pip package
BASE = {"numpy": "numpy", "pandas": "pandas", "matplotlib": "matplotlib", "jinja2": "jinja2", "yaml": "pyyaml",
        "scipy": "scipy", "rich": "rich", "pynvml": "nvidia-ml-py"}
TEST = {"pytest": "pytest", "jsonschema": "jsonschema", "xdist": "pytest-xdist>=3.2"}  # xdist: make test on both CI cores (worksteal: 3.2)
NO_GPU = "primbench: no NVIDIA GPU here (nvidia-smi finds none); to see a real run, render the bundled one: make report"
# CI compiles every kernel with NVRTC and no GPU: CuPy's wheel for CUDA 13 plus NVRTC from pip.
CI_CUDA_MAJOR = 13
NVRTC = "nvidia-cuda-nvrtc=={}.*".format(CI_CUDA_MAJOR)
PIP_WITH_PYTHON_OPTION = (22, 3)  # the first pip with `pip --python`, to install into a venv made without pip
NO_PIP = ("primbench: cannot put pip into the virtual environment (no ensurepip) and this python's pip cannot "
          "install into it; install python3-venv (sudo apt install python3-venv) and run again")
# Each argument is `module` or `module=package>=floor`: missing when it does not import, or when
# the package's version is under the floor (make test needs pytest-xdist 3.2 for --dist worksteal).
PROBE = ("import importlib.util as u, importlib.metadata as m, sys\n"
         "def old(package, floor):\n"
         "    try:\n        have = m.version(package)\n    except Exception:\n        return True\n"
         "    number = lambda text: tuple(int(p) for p in text.split('.')[:3] if p.isdigit())\n"
         "    return number(have) < number(floor)\n"
         "def missing(arg):\n"
         "    name, _, requirement = arg.partition('=')\n"
         "    package, _, floor = requirement.partition('>=')\n"
         "    try:\n        spec = u.find_spec(name)\n    except ImportError:\n        spec = None\n"  # a dotted name's parent missing
         "    return spec is None or bool(floor) and old(package, floor)\n"
         "print(' '.join(a.partition('=')[0] for a in sys.argv[1:] if missing(a)))")
PTH = "primbench-python-packages.pth"  # a venv made from a venv: the packages of the python that made it
NVRTC_PROBE = "from cupy.cuda import nvrtc; nvrtc.getVersion()"
# Which primbench the venv imports from outside the checkout, and whether setuptools is there to
# build the editable install without fetching it (the GPU image has no network).
# setuptools builds an editable wheel itself from 70.1; from 64 it needs the `wheel` package for it.
WHERE_PROBE = ("import importlib.util as u, importlib.metadata as m\n"
               "try:\n    v = tuple(int(p) for p in m.version('setuptools').split('.')[:2])\nexcept Exception:\n    v = (0, 0)\n"
               "print(v >= (70, 1) or (v >= (64, 0) and u.find_spec('wheel') is not None))\n"
               "import primbench\nprint(primbench.__file__)")
STAMP = "primbench-install.stamp"  # pyproject.toml's bytes as the venv's editable install last saw them
# `make bench` also wants today's CCCL for the library baselines (kernels/cccl.py): cuda-cccl's minimal
# CUDA extra, which leaves numba out. Optional: where pip cannot get it (the GPU image has no network)
# the venv is made all the same, and those baselines are skipped, each case saying what to install.
# Tried once per venv (OPTIONAL_STAMP), so that a machine without it is not asked again at every run.
OPTIONAL_GPU_MODULE = "cuda.compute"
OPTIONAL_GPU_PACKAGE = "cuda-cccl[minimal-cu{}]"
OPTIONAL_STAMP = "primbench-optional.stamp"
FLOORS_STAMP = "primbench-floors.stamp"  # the pins a floors venv holds (make test-floors)


@functools.lru_cache(maxsize=1)  # nvidia-smi is asked once per process
def driver_cuda_major() -> "Optional[int]":
    """The CUDA major version the driver supports, from nvidia-smi; None without a GPU."""
    if not shutil.which("nvidia-smi"):
        return None
    try:
        text = subprocess.run(["nvidia-smi"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"CUDA Version:\s*(\d+)", text)
    return int(match.group(1)) if match and "NVIDIA" in text else None


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _shown(path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def missing_in(python, modules: "Dict[str, str]") -> "Optional[List[str]]":
    """The pip packages of `modules` that `python` cannot import; None when it does not run at all."""
    try:
        arguments = [f"{name}={package}" if ">=" in package else name for name, package in modules.items()]
        result = subprocess.run([str(python), "-c", PROBE, *arguments], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, universal_newlines=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return [modules[name] for name in result.stdout.split()] if result.returncode == 0 else None


def system_missing(modules: "Dict[str, str]") -> "List[str]":
    """What the python running this cannot import."""
    return [package for name, package in modules.items() if importlib.util.find_spec(name) is None]


def nvrtc_works(python) -> bool:
    return subprocess.run([str(python), "-c", NVRTC_PROBE], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def make_venv(venv: Path, system_site_packages: bool, clear: bool) -> None:
    """Make (or, with the other system_site_packages, re-point) the venv, with pip where ensurepip exists."""
    what = "with the system's site-packages, which hold everything" if system_site_packages else "(a plain venv)"
    print("primbench: making {} {}".format(_shown(venv), what), flush=True)
    options = dict(system_site_packages=system_site_packages, clear=clear, symlinks=os.name != "nt")
    with_pip = importlib.util.find_spec("ensurepip") is not None and (clear or not has_own_pip(venv))
    try:
        venv_module.EnvBuilder(with_pip=with_pip, **options).create(str(venv))
    except subprocess.CalledProcessError:  # ensurepip is there but cannot run (e.g. no bundled wheel)
        venv_module.EnvBuilder(with_pip=False, **options).create(str(venv))
    if system_site_packages and sys.prefix != sys.base_prefix:
        # This python is itself a venv (the GPU image's python3 is /opt/torch/.venv): a new venv gets its
        # base's site-packages, not this one's, so a .pth file adds this one's (after the venv's own).
        site_dir = venv / ("Lib" if os.name == "nt" else "lib/python{}.{}".format(*sys.version_info[:2])) / "site-packages"
        (site_dir / PTH).write_text("".join(folder + "\n" for folder in site.getsitepackages()), encoding="utf-8")


def has_own_pip(venv: Path) -> bool:
    return any(venv.glob("lib/python*/site-packages/pip/__init__.py")) or (venv / "Lib/site-packages/pip").is_dir()


def _system_pip_version() -> "tuple":
    result = subprocess.run([sys.executable, "-m", "pip", "--version"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, universal_newlines=True)
    match = re.match(r"pip (\d+)\.(\d+)", result.stdout)
    return (int(match.group(1)), int(match.group(2))) if result.returncode == 0 and match else (0, 0)


def pip_install(venv: Path) -> "Optional[List[str]]":
    """The command that installs into the venv's interpreter: its own pip, or else this python's pip
    with `--python` (a venv made without ensurepip); None when neither can."""
    python = str(venv_python(venv))
    if has_own_pip(venv):
        return [python, "-m", "pip", "install", "-q"]
    if _system_pip_version() >= PIP_WITH_PYTHON_OPTION:
        return [sys.executable, "-m", "pip", "--python", python, "install", "-q"]
    return None


def install(venv: Path, packages: "List[str]", dry_run: bool) -> int:
    if not packages:
        return 0
    command = pip_install(venv)
    if command is None:
        print(NO_PIP, file=sys.stderr)
        return 2
    if dry_run:
        print("primbench: would run: " + " ".join(shlex.quote(part) for part in command + packages))
        return 0
    print("primbench: installing {} into {}".format(" ".join(packages), _shown(venv)), flush=True)
    result = subprocess.run(command + packages)
    if result.returncode:
        print("primbench: could not install {}; install them by hand ({} -m pip install ...)".format(
            " ".join(packages), _shown(venv_python(venv))), file=sys.stderr)
    return result.returncode


def wanted(args) -> "Optional[Dict[str, str]]":
    """The modules the mode needs (import name -> pip package); None for --gpu without a GPU."""
    modules = dict(BASE)
    if args.gpu:
        major = driver_cuda_major()
        if major is None:
            return None
        modules["cupy"] = "cupy-cuda{}x".format(major)
    elif args.test or args.compile:
        modules.update(TEST if args.test else {})
        modules["cupy"] = "cupy-cuda{}x".format(CI_CUDA_MAJOR)
    return modules


def refresh(venv: Path, modules: "Dict[str, str]", lacking: "Optional[List[str]]", nvrtc: bool, dry_run: bool) -> int:
    """Make the venv (`lacking` None: there is none that runs), or re-point it at the system's packages
    where those hold everything it lacks, then install what it still lacks."""
    if lacking is None and venv.exists() and not (venv / "pyvenv.cfg").is_file() and (venv.is_file() or any(venv.iterdir())):
        print("primbench: {} is not a virtual environment; remove it or pick another (VENV=...)".format(_shown(venv)),
              file=sys.stderr)
        return 2
    python = venv_python(venv)
    system_has_all = not system_missing(modules)
    if lacking is None:
        make_venv(venv, system_has_all, clear=venv.exists())
    elif system_has_all and lacking:
        make_venv(venv, True, clear=False)
    # With the system's site-packages the venv sees everything: nothing to install.
    status = install(venv, [] if system_has_all else missing_in(python, modules) or [], dry_run)
    if status == 0 and nvrtc and not nvrtc_works(python):  # a dry run's cupy is not there yet: NVRTC is planned too
        status = install(venv, [NVRTC], dry_run)
    return status


def _installed_here(venv: Path) -> "tuple":
    """(whether the venv imports this checkout's primbench from any folder, with the `primbench`
    command and metadata made from today's pyproject.toml; whether it has setuptools)."""
    python = venv_python(venv)
    try:
        result = subprocess.run([str(python), "-c", WHERE_PROBE], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                universal_newlines=True, timeout=120, cwd=os.path.abspath(os.sep))
    except (OSError, subprocess.TimeoutExpired):
        return False, False
    lines = result.stdout.splitlines()
    has_setuptools = lines[:1] == ["True"]
    if result.returncode != 0 or len(lines) < 2 or Path(lines[1]).resolve() != (ROOT / "primbench" / "__init__.py").resolve():
        return False, has_setuptools
    stamp = venv / STAMP
    current = stamp.is_file() and stamp.read_bytes() == (ROOT / "pyproject.toml").read_bytes()
    return current and (venv / "bin" / "primbench").exists(), has_setuptools


def install_editable(venv: Path, dry_run: bool) -> int:
    """primbench itself, editable, into the venv: `.venv/bin/primbench` and `python -m primbench` then
    work from any folder, and edits to the checkout need no reinstall. Only its metadata is built
    (--no-deps: the dependencies are the venv's already), without fetching setuptools where the
    venv has it."""
    if not (ROOT / "pyproject.toml").is_file():
        return 0  # primbench installed from a wheel runs this: there is no checkout to install
    done, has_setuptools = _installed_here(venv)
    if done:
        return 0
    command = pip_install(venv)
    if command is None:
        print(NO_PIP, file=sys.stderr)
        return 2
    command = command + ["--no-deps"] + (["--no-build-isolation"] if has_setuptools else []) + ["-e", str(ROOT)]
    if dry_run:
        print("primbench: would run: " + " ".join(shlex.quote(part) for part in command))
        return 0
    print("primbench: installing primbench (editable) into {}".format(_shown(venv)), flush=True)
    if subprocess.run(command, stdout=subprocess.DEVNULL).returncode:
        print("primbench: could not install primbench into {}; by hand: {} -m pip install -e {}".format(
            _shown(venv), _shown(venv_python(venv)), _shown(ROOT)), file=sys.stderr)
        return 2
    (venv / STAMP).write_bytes((ROOT / "pyproject.toml").read_bytes())
    return 0


def install_optional(venv: Path, package: str, dry_run: bool) -> None:
    """Install `package` (OPTIONAL_GPU_PACKAGE for this driver) into the venv where it lacks it and it was
    never tried there; one warning line when pip cannot, and nothing else changes."""
    python = venv_python(venv)
    stamp = venv / OPTIONAL_STAMP
    tried = stamp.read_text(encoding="utf-8").split() if stamp.is_file() else []
    if package in tried or missing_in(python, {OPTIONAL_GPU_MODULE: package}) != [package]:
        return
    command = pip_install(venv)
    if command is None:
        return
    command = command + ["--retries", "0", "--timeout", "20", package]
    if dry_run:
        print("primbench: would run: " + " ".join(shlex.quote(part) for part in command))
        return
    print("primbench: installing {} into {} (the library baselines)".format(package, _shown(venv)), flush=True)
    if subprocess.run(command).returncode:
        print("primbench: could not install {} (no network?); its baselines will be skipped. By hand: {} -m pip install '{}'"
              .format(package, _shown(python), package), file=sys.stderr)
    stamp.write_text("\n".join(tried + [package]) + "\n", encoding="utf-8")


def floor_pins() -> "List[str]":
    """pyproject.toml's dependency floors as exact pins: 'numpy>=1.24' -> 'numpy==1.24.*' (the floor's
    latest patch), 'pyyaml>=6.0.1' -> 'pyyaml==6.0.1'. The floors are declared once, there."""
    import tomllib

    pins = []
    for requirement in tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]:
        name, _, floor = requirement.partition(">=")
        if not floor:
            raise SystemExit("primbench: pyproject.toml's {!r} has no floor (>=); every dependency declares one".format(requirement))
        floor = floor.strip()
        pins.append("{}=={}".format(name.strip(), floor if floor.count(".") >= 2 else floor + ".*"))
    return pins


def make_floors(venv: Path, dry_run: bool) -> int:
    """`make test-floors`: a plain venv with exactly the declared floors and the test tools, so that
    the unit tests show the floors are true (no CuPy: the kernel-compiling tests stay with make test)."""
    python = venv_python(venv)
    pins = floor_pins()
    if python.exists() and missing_in(python, TEST) == [] and (venv / FLOORS_STAMP).is_file() \
            and (venv / FLOORS_STAMP).read_text(encoding="utf-8") == "\n".join(pins):
        return 0
    make_venv(venv, False, clear=venv.exists())
    status = install(venv, pins + list(TEST.values()), dry_run)
    if status == 0 and not dry_run:
        (venv / FLOORS_STAMP).write_text("\n".join(pins), encoding="utf-8")
    return status


def main(argv: "Optional[List[str]]" = None) -> int:
    if sys.version_info < MIN_PYTHON:
        print("primbench: needs Python {}.{} or newer, and {} is {}.{}; run with a newer one (make ... PYTHON=python3.12)".format(
            *MIN_PYTHON, sys.executable, *sys.version_info[:2]), file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--gpu", action="store_true", help="for `make bench`: needs an NVIDIA GPU")
    mode.add_argument("--test", action="store_true", help="for `make test`: no GPU, but NVRTC to compile kernels")
    mode.add_argument("--compile", action="store_true", help="for `make compile`: --test without the test tools")
    mode.add_argument("--report", action="store_true", help="for `make report`: no GPU")
    mode.add_argument("--floors", action="store_true", help="for `make test-floors`: the declared dependency floors")
    parser.add_argument("--venv", default=str(ROOT / ".venv"), help="the virtual environment (default: .venv in the repository)")
    parser.add_argument("--dry-run", action="store_true", help="make the venv (downloads nothing) but only print the pip commands")
    args = parser.parse_args(argv)

    if args.floors:
        return make_floors(Path(args.venv).absolute(), args.dry_run)
    modules = wanted(args)
    if modules is None:
        print(NO_GPU, file=sys.stderr)
        return 3
    venv = Path(args.venv).absolute()
    python = venv_python(venv)
    lacking = missing_in(python, modules) if python.exists() else None
    nvrtc = args.test or args.compile
    if not (lacking == [] and (not nvrtc or nvrtc_works(python))):
        status = refresh(venv, modules, lacking, nvrtc, args.dry_run)
        if status:
            return status
    if args.gpu:
        install_optional(venv, OPTIONAL_GPU_PACKAGE.format(driver_cuda_major()), args.dry_run)
    return install_editable(venv, args.dry_run)  # silent when it is there already (the fast path)


if __name__ == "__main__":
    sys.exit(main())
