"""`check --confirm`'s timing on the GPU (marker `gpu`; run/confirm.py): one suspect case timed
against the variant as a commit declared it, interleaved. A user's repository commits a copy of
vector_load_sum, then gives it tests/plugins/slower_sum.py's extra pass (a second launch over 1/48
of the input: 14-15 % more time at 2^25, measured with `ab`). Against the commit, the edit is
confirmed SLOWER; against itself (committed), it is SAME; a working tree that is not the run's code
is refused."""


import pytest

from primbench.errors import UserError
from primbench.runfile.case_id import CaseId
from tests.conftest import REPO
from tests.throwaway_git import git

pytestmark = [pytest.mark.gpu, pytest.mark.timed]  # timed: run alone (make gpu-test)

VARIANT = "test_only_confirm_sum"
CASE = CaseId("reduce", VARIANT, "float32", 2**25 + 7, 256, "uniform")  # a multiple of no block or vector width


@pytest.fixture
def edited_plugin(tmp_path):
    """(the plugin's path, the sha of the commit before the edit), the edit in the working tree."""
    repo = tmp_path / "mine"
    repo.mkdir()
    plugin = repo / "confirm_sum.py"
    text = (REPO / "tests" / "plugins" / "slower_sum.py").read_text().replace('name="test_only_slower_sum"',
                                                                             f'name="{VARIANT}"')
    plain = 'prepare=registry.get("reduce", "vector_load_sum").prepare,'
    assert "prepare=_prepare_with_an_extra_pass," in text and "version=1," in text
    plugin.write_text(text.replace("prepare=_prepare_with_an_extra_pass,", plain))
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "vector_load_sum"]):
        git(repo, *args)
    sha = git(repo, "rev-parse", "HEAD")
    plugin.write_text(text.replace("version=1,", "version=2,"))
    return plugin, sha


def test_an_extra_pass_of_3_percent_is_confirmed_slower_against_the_commit_before_it(edited_plugin, tmp_path):
    from primbench import registry
    from primbench.run.confirm import retime_against

    plugin, sha = edited_plugin
    registry.load_plugin(plugin)
    today = registry.get("reduce", VARIANT).hash()
    ratio, low, high, verdict = retime_against(CASE, None, today, sha, 200, 0.05)
    print(ratio, low, high, verdict)
    assert verdict == "SLOWER" and low > 1.05 and ratio < 1.4, (ratio, low, high)
    with pytest.raises(UserError, match="is not the code the new run measured"):
        retime_against(CASE, None, "0" * 16, sha, 200, 0.05)
    repo = plugin.parent
    git(repo, "commit", "-qam", "the extra pass")
    head = git(repo, "rev-parse", "HEAD")
    ratio, low, high, verdict = retime_against(CASE, None, today, head, 200, 0.05)
    print(ratio, low, high, verdict)
    assert verdict == "SAME" and low <= 1.0 <= high, (ratio, low, high)
