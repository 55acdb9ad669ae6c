"""`primbench bisect`'s steps on the GPU (marker `gpu`; run/bisect.py): each step is `check
--confirm`'s child process with both sides taken from git. A user's repository commits a copy of
vector_load_sum, then tests/plugins/slower_sum.py's extra pass (14-15 % more time at 2^25, see
tests/gpu/test_confirm.py), then a comment. GOOD..extra pass names the extra pass in one step (BAD
is GOOD's child: the endpoints are the culprit against its parent); extra pass..comment is not
reproduced. tools/bisect_acceptance.sh runs the whole command on longer histories."""


import pytest

from tests.conftest import REPO
from tests.throwaway_git import git

pytestmark = [pytest.mark.gpu, pytest.mark.timed]  # timed: run alone (make gpu-test)

VARIANT = "test_only_bisect_sum"


def test_the_real_steps_name_the_extra_pass_and_do_not_reproduce_a_comment(tmp_path):
    from primbench import registry
    from primbench.run import bisect
    from primbench.run.bisect_search import FOUND, NOT_REPRODUCED

    repo = tmp_path / "mine"
    repo.mkdir()
    plugin = repo / "bisect_sum.py"
    text = (REPO / "tests" / "plugins" / "slower_sum.py").read_text().replace('name="test_only_slower_sum"',
                                                                             f'name="{VARIANT}"')
    plain = text.replace("prepare=_prepare_with_an_extra_pass,", 'prepare=registry.get("reduce", "vector_load_sum").prepare,')
    git(repo, "init", "-q")
    for subject, content in (("vector_load_sum", plain), ("the extra pass", text.replace("version=1,", "version=2,")),
                             ("a comment", text.replace("version=1,", "version=2,") + "# a comment\n")):
        plugin.write_text(content)
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", subject)
    registry.load_plugin(plugin)
    shas = git(repo, "log", "--reverse", "--format=%H").splitlines()
    found = {}
    for good, bad in ((shas[0], shas[1]), (shas[1], shas[2])):
        request = bisect.prepare(good, bad, f"reduce/{VARIANT}", sizes=(2**25 + 7,), blocks=None, dtypes=None)
        steps, outcome = bisect.search(request, bisect.step_timer(request), lambda step: print(step.line(request.history)))
        print(outcome.line)
        found[bad] = (len(steps), outcome)
    steps, outcome = found[shas[1]]
    assert (steps, outcome.kind, outcome.commit) == (1, FOUND, 1) and "SLOWER against its parent, GOOD" in outcome.line
    steps, outcome = found[shas[2]]
    assert (steps, outcome.kind) == (1, NOT_REPRODUCED), outcome.line
