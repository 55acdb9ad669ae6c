"""`primbench ab A --base REV` takes A from git (primbench/run/ab_revision.py): REV's .cu and plan, not
today's, loaded beside today's without touching the registry; every mistake one line and exit 2.
The timing itself needs a GPU (tests/gpu/test_ab.py)."""

import json
import shutil
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO
from tests.e2e.test_cli_tool import one_line_error, primbench
from tests.throwaway_git import git

TOY = REPO / "tests" / "plugins"


def _committed_repo(tmp_path, names, message="first"):
    """A fresh git repository holding copies of tests/plugins/<name> for each name, committed."""
    repo = tmp_path / "mine"
    repo.mkdir()
    for name in names:
        shutil.copy(TOY / name, repo / name)
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", message)
    return repo


@pytest.fixture
def plugin_repo(tmp_path):
    """A user's git repository holding the toy op's plugin (it declares an op of its own, too):
    one commit, then an uncommitted edit of its .cu."""
    if shutil.which("git") is None:
        pytest.fail("git is missing; the CI image must have it (primbench records the commit of every run)")
    repo = _committed_repo(tmp_path, ("toy_scale.py", "toy_scale.cu"))
    with open(repo / "toy_scale.cu", "a") as cu:
        cu.write("\n// edited after the commit\n")
    return repo


def _load_in_a_child(repo, rev):
    """variant_at in a fresh process (plugins register globally), reported as JSON."""
    code = textwrap.dedent(f"""
        import json, sys
        from primbench import build, registry
        from primbench.run.ab_revision import variant_at
        registry.load_plugin({str(repo / "toy_scale.py")!r})
        old, now = variant_at({rev!r}, "toy_scale/one_per_thread"), registry.get("toy_scale", "one_per_thread")
        compiled = build.compile_for_arch(old.source, old.kernels, "sm_90")
        print(json.dumps(dict(old_hash=old.hash(), now_hash=now.hash(), old_source=old.source,
                              old_text=old.source_text(), now_is_registered=registry.get("toy_scale", "one_per_thread") is now,
                              cubin_bytes=compiled.cubin_bytes)))
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_the_base_variant_is_the_committed_source_compiled_beside_todays(plugin_repo):
    got = _load_in_a_child(plugin_repo, "HEAD")
    assert "edited after the commit" not in got["old_text"]
    assert got["old_text"] == subprocess.run(["git", "-C", str(plugin_repo), "show", "HEAD:toy_scale.cu"],
                                             capture_output=True, text=True, check=True).stdout
    assert got["old_hash"] != got["now_hash"], "the edit must change the hash, or ab could not tell A from B"
    assert not got["old_source"].startswith(str(plugin_repo)), "A must compile REV's file, not the working tree's"
    assert got["now_is_registered"] and got["cubin_bytes"] > 0


def test_with_no_change_since_rev_the_base_has_todays_hash(plugin_repo):
    git(plugin_repo, "commit", "-q", "-am", "second")
    got = _load_in_a_child(plugin_repo, "HEAD")
    assert got["old_hash"] == got["now_hash"]


@pytest.mark.parametrize("args, words", [
    (("reduce/vector_load_sum", "--base", "no-such-rev"), ("no-such-rev", "no such commit")),
    (("reduce/vector_load_sum", "--base=--output=x"), ("--output=x", "no such commit")),
    (("reduce/no_such_variant", "--base", "HEAD"), ("no_such_variant",)),
    (("reduce/vector_load_sum",), ("give B", "--base REV")),
])
def test_mistakes_with_base_are_one_line_and_exit_2(tmp_path, args, words):
    one_line_error(primbench(tmp_path, "ab", *args), *words)


def test_a_plugin_outside_git_cannot_take_a_base(tmp_path):
    for name in ("toy_scale.py", "toy_scale.cu"):
        shutil.copy(TOY / name, tmp_path / name)
    if subprocess.run(["git", "-C", str(tmp_path), "rev-parse"], capture_output=True).returncode == 0:
        pytest.skip("the temporary folder is inside a git repository here")
    one_line_error(primbench(tmp_path, "ab", "--plugin", tmp_path / "toy_scale.py", "toy_scale/one_per_thread",
                             "--base", "HEAD"), "not in a git repository")


def test_a_revision_before_the_variant_existed_is_one_line(plugin_repo):
    (plugin_repo / "later.py").write_text((plugin_repo / "toy_scale.py").read_text().replace("one_per_thread", "later_one")
                                          .replace('register_op(OpChecks(', 'register_op_unused = (OpChecks(')
                                          .replace('"toy_scale.cu"', '"toy_scale.cu"'))
    git(plugin_repo, "add", "later.py")
    git(plugin_repo, "commit", "-q", "-m", "later")
    result = primbench(plugin_repo, "ab", "--plugin", plugin_repo / "toy_scale.py", "--plugin", plugin_repo / "later.py",
                       "toy_scale/later_one", "--base", "HEAD~1")
    one_line_error(result, "later.py", "did not exist")


def test_a_plugin_reusing_a_built_in_kernel_keeps_todays_built_in_source(tmp_path):
    """tests/plugins/slower_sum.py wraps vector_load_sum: its source names the built-in
    reduce_vector.cu, which the plugin's repository does not hold."""
    repo = _committed_repo(tmp_path, ("slower_sum.py",))
    code = textwrap.dedent(f"""
        from primbench import build, registry
        from primbench.run.ab_revision import variant_at
        registry.load_plugin({str(repo / "slower_sum.py")!r})
        old = variant_at("HEAD", "reduce/test_only_slower_sum")
        assert old.source == "reduce_vector.cu", old.source
        assert old.hash() == registry.get("reduce", "test_only_slower_sum").hash()
        assert build.compile_for_arch(old.source, old.kernels, "sm_80").cubin_bytes > 0
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]


def test_a_source_not_committed_at_rev_is_one_line(tmp_path):
    """The plugin's .py was committed, its .cu only added to the working tree afterwards."""
    repo = _committed_repo(tmp_path, ("toy_scale.py",), "the plan only")
    shutil.copy(TOY / "toy_scale.cu", repo / "toy_scale.cu")
    result = primbench(repo, "ab", "--plugin", repo / "toy_scale.py", "toy_scale/one_per_thread", "--base", "HEAD")
    one_line_error(result, "toy_scale.cu", "did not exist")
