"""`primbench bisect GOOD BAD OP/VARIANT --sizes N` over real throwaway git histories of the toy
op's plugin, each step timed by tests/stand_in/bisect_steps.py (a commit's kernel compiled with
NVRTC as the real step does, then "1.03 x per extra pass" in place of the GPU's samples); the
command line, the commits, the search and its output are the real ones. The real step's timing is
tests/gpu/test_bisect.py's."""

import json
import shutil
import subprocess
import sys

import pytest

from tests.conftest import REPO, _gpu_available
from tests.e2e.test_cli_tool import one_line_error, primbench
from tests.throwaway_git import git

STAND_IN = REPO / "tests" / "stand_in" / "bisect_steps.py"
TOY = REPO / "tests" / "plugins"
VARIANT = "toy_scale/one_per_thread"
STORE = "    if (i < n) y[i] = 2.0f * x[i];\n"
EXTRA_PASS = STORE + "    // extra pass: the same store again\n" + STORE


def _history(tmp_path, edits) -> tuple:
    """(the repository, the sha of each commit): the toy plugin committed, then one commit per
    (subject, file, text or a function of the file's text) of `edits`."""
    if shutil.which("git") is None:
        pytest.fail("git is missing; the CI image must have it (primbench records the commit of every run)")
    repo = tmp_path / "mine"
    repo.mkdir()
    for name in ("toy_scale.py", "toy_scale.cu"):
        shutil.copy(TOY / name, repo / name)
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "toy_scale: y = 2x")
    for subject, name, change in edits:
        path = repo / name
        path.write_text(change(path.read_text() if path.exists() else "") if callable(change) else change)
        git(repo, "add", name)
        git(repo, "commit", "-q", "-m", subject)
    return repo, git(repo, "log", "--reverse", "--format=%H").splitlines()


def _bisect(repo, *args):
    return subprocess.run([sys.executable, STAND_IN, "bisect", *map(str, args), "--plugin", repo / "toy_scale.py"],
                          cwd=repo, capture_output=True, text=True)


def _steps(result) -> list[str]:
    return [line for line in result.stdout.splitlines() if line.startswith("step ")]


def _an_extra_pass(text: str) -> str:
    assert STORE in text
    return text.replace(STORE, EXTRA_PASS)


NOTE = [("a note", "NOTES.md", "a note\n"), ("another note", "NOTES.md", lambda text: text + "another\n")]


@pytest.fixture
def third_of_five_is_slower(tmp_path):
    """Five commits; the third gives the kernel an extra pass."""
    return _history(tmp_path, [("a comment in the kernel", "toy_scale.cu", lambda text: text + "// a comment\n"),
                               ("the kernel stores twice", "toy_scale.cu", _an_extra_pass), *NOTE])


def test_bisect_names_the_third_of_five_commits_in_three_steps_and_leaves_the_working_tree_alone(third_of_five_is_slower,
                                                                                                  tmp_path):
    repo, shas = third_of_five_is_slower
    (repo / "NOTES.md").write_text("an edit not committed\n")
    before = [git(repo, *args) for args in (["status", "--porcelain"], ["rev-parse", "HEAD"], ["worktree", "list"],
                                              ["stash", "list"])]
    result = _bisect(repo, shas[0], shas[-1], VARIANT, "--sizes", "2^20", "--json", tmp_path / "bisect.json")
    assert result.returncode == 0, result.stderr
    steps = _steps(result)
    assert 1 <= len(steps) <= 3, result.stdout
    assert steps[0].startswith(f"step 1: {shas[-1][:12]} another note against GOOD: B/A 1.0300") and "SLOWER" in steps[0]
    assert f"first SLOWER commit: {shas[2][:12]} the kernel stores twice (B/A 1.0300" in result.stdout
    assert json.loads((tmp_path / "bisect.json").read_text())["outcome"]["commit"] == shas[2]
    after = [git(repo, *args) for args in (["status", "--porcelain"], ["rev-parse", "HEAD"], ["worktree", "list"],
                                             ["stash", "list"])]
    assert after == before and (repo / "NOTES.md").read_text() == "an edit not committed\n"


def test_a_history_where_nothing_changes_is_not_reproduced_in_one_step(tmp_path):
    repo, shas = _history(tmp_path, [("a comment in the kernel", "toy_scale.cu", lambda text: text + "// a comment\n"),
                                     ("a second comment", "toy_scale.cu", lambda text: text + "// another\n"), *NOTE])
    result = _bisect(repo, shas[0], shas[-1], VARIANT, "--sizes", "2^20")
    assert result.returncode == 0, result.stderr
    assert len(_steps(result)) == 1 and "B/A 1.0000" in _steps(result)[0]
    assert result.stdout.splitlines()[-1].startswith("not reproduced: BAD is not SLOWER than GOOD on this GPU")


def test_a_commit_whose_kernel_does_not_build_is_set_aside_with_its_reason(tmp_path):
    broken = ("the kernel half written", "toy_scale.cu", lambda text: text.replace("2.0f * x[i];", "2.0f * x[i]"))
    fixed = ("the kernel whole again", "toy_scale.cu", lambda text: text.replace("2.0f * x[i]\n", "2.0f * x[i];\n"))
    repo, shas = _history(tmp_path, [NOTE[0], broken, fixed, ("the kernel stores twice", "toy_scale.cu", _an_extra_pass),
                                     NOTE[1]])
    result = _bisect(repo, shas[0], shas[-1], VARIANT, "--sizes", "2^20")
    assert result.returncode == 0, result.stderr
    aside = [line for line in _steps(result) if "skipped" in line]
    assert len(aside) == 1 and aside[0].startswith(f"step 2: {shas[2][:12]} the kernel half written against GOOD: "
                                                   "skipped: does not build: toy_scale.cu(")
    assert "error" in aside[0] and "/tmp" not in aside[0]
    assert f"first SLOWER commit: {shas[4][:12]} the kernel stores twice" in result.stdout


def test_max_steps_stops_the_search_and_says_how_to_go_on(third_of_five_is_slower):
    repo, shas = third_of_five_is_slower
    result = _bisect(repo, shas[0], shas[-1], VARIANT, "--sizes", "2^20", "--max-steps", "2")
    assert result.returncode == 0, result.stderr
    assert len(_steps(result)) == 2
    assert (f"stopped after 2 steps (--max-steps 2): the first SLOWER commit is one of the 2 after {shas[0][:12]} up "
            f"to {shas[2][:12]}") in result.stdout
    assert (f"to go on: primbench bisect {shas[0][:12]} {shas[2][:12]} {VARIANT} --sizes '2^20' --blocks 256 "
            f"--dtypes float32 --plugin {repo / 'toy_scale.py'}") in result.stdout


def test_mistakes_are_one_line_and_exit_2(third_of_five_is_slower):
    repo, shas = third_of_five_is_slower
    plugin = ("--plugin", repo / "toy_scale.py")
    for args, words in [
        ((shas[-1], shas[0], VARIANT, "--sizes", "2^20"), ("not an ancestor", "the other way round")),
        (("no-such-rev", shas[-1], VARIANT, "--sizes", "2^20"), ("GOOD 'no-such-rev'", "no such commit")),
        ((shas[0], shas[-1], "toy_scale/nope", "--sizes", "2^20"), ("toy_scale/nope", "matches no variant")),
        ((shas[0], shas[-1], VARIANT, "--sizes", "2^20,2^22"), ("bisect times one case",)),
    ]:
        one_line_error(primbench(repo, "bisect", *args, *plugin), *words)


def test_a_variant_that_good_did_not_declare_is_one_line(tmp_path):
    repo, shas = _history(tmp_path, [NOTE[0]])
    (repo / "later.py").write_text((repo / "toy_scale.py").read_text().replace("one_per_thread", "later_one")
                                   .replace("register_op(OpChecks(", "register_op_unused = (OpChecks("))
    git(repo, "add", "later.py")
    git(repo, "commit", "-q", "-m", "a later variant")
    result = primbench(repo, "bisect", shas[0], "HEAD", "toy_scale/later_one", "--sizes", "2^20",
                       "--plugin", repo / "toy_scale.py", "--plugin", repo / "later.py")
    one_line_error(result, "bisect GOOD", "later.py did not exist")


@pytest.mark.skipif(_gpu_available()[0], reason="a GPU is here: the bisection would run")
def test_without_a_gpu_a_good_request_is_one_line(third_of_five_is_slower):
    repo, shas = third_of_five_is_slower
    result = primbench(repo, "bisect", shas[0], shas[-1], VARIANT, "--sizes", "2^20", "--plugin", repo / "toy_scale.py")
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 3 and len(lines) == 1 and "no NVIDIA GPU" in lines[0], result.stderr
    assert not result.stdout
