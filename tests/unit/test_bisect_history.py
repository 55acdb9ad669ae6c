"""The commits `primbench bisect` searches (primbench/run/bisect_history.py): GOOD and the commits
after it on BAD's first-parent line, read from a throwaway repository; every pair of revisions that
cannot be bisected is one line."""


import pytest

from primbench.errors import UserError
from primbench.run.bisect_history import first_parent_line
from tests.throwaway_git import git


@pytest.fixture
def repo(tmp_path):
    """main: m0, m1, a merge of the branch side (s1), m2; the subjects say which."""
    git(tmp_path, "init", "-q", "-b", "main")
    for name in ("m0", "m1"):
        git(tmp_path, "commit", "-q", "--allow-empty", "-m", name)
    git(tmp_path, "checkout", "-q", "-b", "side", "HEAD~1")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "s1")
    git(tmp_path, "checkout", "-q", "main")
    git(tmp_path, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "m2 \x1b[31mred\x1b[0m")
    return tmp_path


def test_the_commits_are_good_then_each_first_parent_up_to_bad(repo):
    commits = first_parent_line(repo, "main~3", "main")
    assert [c.subject for c in commits] == ["m0", "m1", "merge side", "m2 \\x1b[31mred\\x1b[0m"]
    assert commits[0].sha == git(repo, "rev-parse", "main~3") and commits[-1].sha == git(repo, "rev-parse", "main")
    assert commits[1].label(8) == f"{commits[1].sha[:12]} m1" and commits[2].label(8) == f"{commits[2].sha[:12]} merge..."


@pytest.mark.parametrize("good, bad, words", [
    ("main", "main~1", "not an ancestor of BAD 'main~1'; give them the other way round"),
    ("side", "main~2", "not an ancestor of BAD 'main~2'; give a commit BAD was built on"),
    ("side", "main", "came into BAD through a merge"),
    ("main", "HEAD", "are the same commit"),
    ("nope", "main", "GOOD 'nope': no such commit"),
    ("main~1", "--output=x", "BAD '--output=x': no such commit"),
])
def test_revisions_that_cannot_be_bisected_are_one_line(repo, good, bad, words):
    with pytest.raises(UserError) as refused:
        first_parent_line(repo, good, bad)
    assert words in str(refused.value) and "\n" not in str(refused.value)
