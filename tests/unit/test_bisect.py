"""`primbench bisect`'s request (primbench/run/bisect.py): the one case it times, the command it
prints to go on, and `check --confirm`'s pointer to it for a confirmed regression."""

import dataclasses

import pytest

from primbench.errors import UserError
from primbench.run import bisect
from primbench.runfile.case_id import CaseId, size_text


def test_one_case_is_the_variant_at_one_size_block_and_dtype():
    case = bisect.one_case("reduce/vector_load_sum", (2**20,), None, None)
    assert (case.op, case.variant, case.n, case.block, case.dtype) == ("reduce", "vector_load_sum", 2**20, 256, "float32")
    assert bisect.one_case("reduce/vector_load_sum", (2**20,), (128,), ("int32",)).block == 128


@pytest.mark.parametrize("variant, sizes, blocks, dtypes, words", [
    ("reduce/vector_*", (2**20,), None, None, "not a pattern"),
    ("reduce/vector_load_sum", (2**20, 2**22), None, None, "--sizes 1048576,4194304: bisect times one case"),
    ("reduce/vector_load_sum", (2**20,), (128, 256), None, "--blocks 128,256: bisect times one case"),
    ("reduce/vector_load_sum", (2**20,), None, ("float32", "int32"), "--dtypes float32,int32"),
    ("reduce/nope", (2**20,), None, None, "matches no variant"),
    ("reduce/vector_load_sum", (2**20,), (32,), None, "--blocks 32: reduce/vector_load_sum takes block sizes 64,"),
])
def test_a_request_for_more_or_less_than_one_case_is_one_line(variant, sizes, blocks, dtypes, words):
    with pytest.raises(UserError) as refused:
        bisect.one_case(variant, sizes, blocks, dtypes)
    assert words in str(refused.value)


def test_the_command_to_go_on_is_quoted_for_a_shell():
    case = CaseId("reduce", "vector_load_sum", "float32", 2**28, 256, "uniform")
    assert (bisect.command_line("abc", "def", "reduce/vector_load_sum", case) ==
            "primbench bisect abc def reduce/vector_load_sum --sizes '2^28' --blocks 256 --dtypes float32")
    odd = dataclasses.replace(case, n=1000, block=None)
    assert (bisect.command_line("abc", "def", "my op/x;rm -rf ~", odd, ["/my plugins/p.py"]) ==
            "primbench bisect abc def 'my op/x;rm -rf ~' --sizes 1000 --dtypes float32 --plugin '/my plugins/p.py'")


def test_the_parser_default_of_max_steps_is_the_searchs():
    from primbench.cli.parser import parser

    args = parser().parse_args(["bisect", "a", "b", "reduce/vector_load_sum", "--sizes", "2^20"])
    assert (args.max_steps, args.rounds, args.threshold) == (bisect.DEFAULT_MAX_STEPS, 200, 0.01)


def test_check_confirm_prints_the_bisect_command_under_each_confirmed_regression(capsys):
    from primbench.cli import check
    from primbench.compare import confirmation, verdicts
    from tests.unit.test_confirm import answering, planted

    base, new, _keys = planted(count=2)
    new = dataclasses.replace(new, header=dataclasses.replace(new.header, git={"sha": "f" * 40, "dirty": False}))
    _, pairs = verdicts.check(base, new)
    confirmation.confirm_suspects(pairs, base, new, answering("SLOWER"))
    check._print(base, new, pairs, [], [], everything=False)
    lines = capsys.readouterr().out.splitlines()
    hints = [line for line in lines if line.startswith("    find the commit: ")]
    assert len(hints) == 2
    for pair in (p for p in pairs if p.regressed):  # each under its own regression line
        below = lines[next(i for i, line in enumerate(lines) if line.startswith(f"  regression: {pair.text}")) + 1]
        assert below == (f"    find the commit: primbench bisect {base.git['sha'][:12]} ffffffffffff "
                         f"{pair.case.op}/{pair.case.variant} --sizes '{size_text(pair.case.n)}' --blocks {pair.case.block} "
                         f"--dtypes {pair.case.dtype}")
    _, pairs = verdicts.check(base, new)
    confirmation.confirm_suspects(pairs, base, new, answering("UNSURE"))  # unconfirmed: nothing to bisect yet
    check._print(base, new, pairs, [], [], everything=False)
    assert "find the commit" not in capsys.readouterr().out
