"""What a run shows while it goes: each case line names dtype and distribution and carries an ETA
from the pace so far; report and publish say what they do."""

from primbench import progress
from primbench.runfile.case_id import CaseId, Params


def _case(**changes):
    fields = dict(op="reduce", variant="vector_load_sum", dtype="bfloat16", n=2**25, block=256,
                  distribution="ill_conditioned", params=Params({}))
    fields.update(changes)
    return CaseId(**fields)


def test_a_case_line_names_its_dtype_and_distribution():
    label = progress.case_label(_case())
    assert label == "reduce/vector_load_sum bfloat16 ill_conditioned n=33554432 block=256"
    assert progress.case_label(_case(block=None, params=Params({"bins": 64}))).endswith("block=lib bins=64")


def test_each_line_carries_the_eta_at_the_pace_so_far(capsys):
    now = [0.0]
    bar = progress.Progress(4, clock=lambda: now[0])  # not a terminal under pytest: plain lines
    assert bar.eta_seconds() is None
    now[0] = 30.0
    bar.line("first")
    now[0] = 60.0
    bar.line("second")
    assert capsys.readouterr().out.splitlines() == ["[1/4 ETA 1m30s] first", "[2/4 ETA 1m00s] second"]


def test_durations_read_short():
    assert [progress.duration_text(s) for s in (5, 65, 3725)] == ["5s", "1m05s", "1h02m"]


def test_report_and_publish_say_what_they_do_on_stderr_leaving_stdout_to_the_paths(capsys):
    progress.say("drawing 3 charts")
    captured = capsys.readouterr()
    assert captured.err == "primbench: drawing 3 charts\n" and captured.out == ""
