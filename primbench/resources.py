"""Where primbench's own files are: the CUDA sources, the report templates, the bundled configs, the
reference run and the published figures, found through importlib.resources as `primbench.<name>`.

Installed, pyproject.toml's package-dir maps the repository's top-level folders (kernels/,
report_templates/, configs/, results/reference/) into the package; run from a checkout, the same
names are mapped by primbench/__init__.py (CHECKOUT_PACKAGES). IMPORT_ROOT below is the folder
holding the package, which a child process needs on its path.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path


def package_folder(name: str) -> Path:
    """The folder of `primbench.<name>` (kernels, report_templates, configs, reference) on disk.

    NVRTC and Jinja need real paths: primbench is installed as files, never from a zip."""
    return Path(str(resources.files(f"primbench.{name}")))


# The folder that holds the primbench package: the site-packages of an install, the checkout of a
# clone. A child process primbench starts (a GPU worker, the profiled process, the restart after a
# lost CUDA context) must import this same primbench from any working folder.
IMPORT_ROOT = Path(__file__).resolve().parent.parent


def child_environment(base=None, **extra) -> dict:
    """The environment of a child process: `base` (default os.environ) and `extra`, with IMPORT_ROOT
    first on PYTHONPATH, so that `python -m primbench...` finds this primbench wherever it runs."""
    env = dict(os.environ if base is None else base, **extra)
    paths = [str(IMPORT_ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != str(IMPORT_ROOT)]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


KERNEL_DIR = package_folder("kernels")
TEMPLATE_DIR = package_folder("report_templates")
CONFIG_DIR = package_folder("configs")
PUBLISHED_FIGURES = package_folder("reference") / "published.json"
# The reference run, bundled: results/reference/ in a clone, primbench/reference/ in the wheel.
REFERENCE_RUN = package_folder("reference") / "nvidia-h200.jsonl.gz"


def in_a_clone() -> bool:
    """Whether primbench runs from a clone of the repository (its Makefile beside the package), so
    that make targets exist; a pip user has only the `primbench` command."""
    return (IMPORT_ROOT / "Makefile").is_file() and (IMPORT_ROOT / "kernels" / "__init__.py").is_file()


def command_hint(make_target: str, command: str) -> str:
    """How to do something, in the words the user has: the make target in a clone, else the command."""
    return make_target if in_a_clone() else command


def render_the_reference_hint() -> str:
    return "to see a real run, render the bundled one: " + command_hint("make report", "primbench report --reference")


def bundled_config(argument: str) -> Path | None:
    """A bundled config named on the command line as `configs/default.yaml`, `default.yaml` or
    `default`, for users running primbench outside its checkout; None when there is none."""
    name = Path(argument).name
    for candidate in (name, f"{name}.yaml"):
        path = CONFIG_DIR / candidate
        if path.suffix == ".yaml" and path.is_file():
            return path
    return None
