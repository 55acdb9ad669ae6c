"""A variant's identity hash covers what decides its GPU work and nothing else: a comment in a plan
or a new LaunchContext field keeps every hash; one statement changed in a .cu file changes the
hashes of exactly that file's variants. (`compare` and `check` pair runs by these hashes.)"""

import json
import shutil
import subprocess
import sys

import pytest

from primbench import registry

FOLDERS = ("primbench", "kernels", "configs", "report_templates", "results/reference")
PRINT_HASHES = "import json; from primbench import registry; print(json.dumps({v.key: v.hash() for v in registry.variants()}))"


@pytest.fixture(scope="module")
def hashes_now() -> dict:
    return {v.key: v.hash() for v in registry.variants()}


def hashes_after(repo, tmp_path, edit) -> dict:
    """The hashes of a copy of the checkout with `edit(copy_root)` applied, in a fresh process."""
    for folder in FOLDERS:
        shutil.copytree(repo / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    edit(tmp_path)
    result = subprocess.run([sys.executable, "-c", PRINT_HASHES], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def replace_once(path, old: str, new: str) -> None:
    """Replace the first `old` in the file (it must be there)."""
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def test_a_comment_or_docstring_in_a_plan_keeps_every_hash(repo, tmp_path, hashes_now):
    def edit(root):
        replace_once(root / "kernels/stencil.py", "    def prepare(ctx: LaunchContext) -> Plan:\n",
                     '    def prepare(ctx: LaunchContext) -> Plan:\n        """A docstring."""\n        # a comment\n')
        replace_once(root / "kernels/reduce.py", "def cub_prepare(ctx: LaunchContext) -> Plan:\n",
                     "def cub_prepare(ctx: LaunchContext) -> Plan:  # a comment\n")

    assert hashes_after(repo, tmp_path, edit) == hashes_now


def test_a_new_launch_context_field_keeps_every_hash(repo, tmp_path, hashes_now):
    def edit(root):
        replace_once(root / "primbench/variant.py", "    grid_scale: float = 1.0\n",
                     "    grid_scale: float = 1.0\n    a_new_field: int = 0  # unrelated to any launch\n")

    assert hashes_after(repo, tmp_path, edit) == hashes_now


def test_one_statement_changed_in_a_cu_file_changes_exactly_its_variants(repo, tmp_path, hashes_now):
    def edit(root):
        replace_once(root / "kernels/stencil.cu", "__global__ void blur1d_naive(const float* in, float* out, int n) {\n",
                     "__global__ void blur1d_naive(const float* in, float* out, int n) {\n    if (n < 0) return;\n")

    after = hashes_after(repo, tmp_path, edit)
    changed = {key for key in hashes_now if after[key] != hashes_now[key]}
    from_stencil_cu = {v.key for v in registry.variants() if v.source == "stencil.cu"}
    assert changed == from_stencil_cu and len(changed) >= 3


def test_a_header_every_cu_file_includes_changes_every_kernel_variant(repo, tmp_path, hashes_now):
    def edit(root):
        (root / "kernels/common.cuh").write_text((root / "kernels/common.cuh").read_text() + "\n#define PRIMBENCH_TEST 1\n")

    after = hashes_after(repo, tmp_path, edit)
    including = {v.key for v in registry.variants() if v.source and '#include "common.cuh"' in v.source_text()}
    assert {key for key in hashes_now if after[key] != hashes_now[key]} == including


def test_a_bumped_version_or_a_changed_launch_constant_changes_the_hash(repo, tmp_path, hashes_now):
    def edit(root):
        replace_once(root / "kernels/reduce.py", "            grid_independent=grid_independent,\n",
                     "            grid_independent=grid_independent,\n            version=2 if name == 'cub_device_reduce' else 1,\n")
        replace_once(root / "kernels/reduce.py", 'two_pass_plan("reduce6_grid_stride_shuffle<{block}>", False)',
                     'two_pass_plan("reduce6_grid_stride_shuffle<{block}>", True)')

    after = hashes_after(repo, tmp_path, edit)
    assert {key for key in hashes_now if after[key] != hashes_now[key]} == {"reduce/cub_device_reduce",
                                                                             "reduce/reduce6_grid_stride_shuffle"}
