"""`--gpus` and `--mode`: what a selection means, what is refused, and how a sweep is split."""

import pytest

from primbench.config.loading import load_config
from primbench.errors import UserError
from primbench.run import gpus
from primbench.run.runner import input_key, order_cases


def test_a_selection_is_all_or_indices_in_the_order_given():
    assert gpus.parse_selection("all") is None
    assert gpus.parse_selection("2,0") == (2, 0)
    assert gpus.parse_selection(" 1 ") == (1,)


@pytest.mark.parametrize("text, says", [("-1", "indices from 0"), ("0,0", "named twice"), ("x", "indices from 0"),
                                        ("", "indices from 0"), ("0,,1", "indices from 0"), ("1.5", "indices from 0"),
                                        ("5000", "past any host"), ("0x1", "indices from 0")])
def test_a_bad_selection_is_refused_in_one_line(text, says):
    with pytest.raises(UserError, match=says) as refused:
        gpus.parse_selection(text)
    assert "\n" not in str(refused.value)


def test_selected_indices_name_the_visible_entries_each_worker_gets():
    visible = ["3", "5", "GPU-abc"]  # a Slurm allocation, or GPUs named by UUID
    assert gpus.select("all", visible) == [gpus.Gpu(0, "3"), gpus.Gpu(1, "5"), gpus.Gpu(2, "GPU-abc")]
    assert gpus.select("2,0", visible) == [gpus.Gpu(2, "GPU-abc"), gpus.Gpu(0, "3")]
    with pytest.raises(UserError, match="GPU 3 does not exist here; this host shows 3 GPU"):
        gpus.select("0,3", visible)
    with pytest.raises(UserError, match="no GPU is visible"):
        gpus.select("all", [])


def test_cuda_visible_devices_decides_what_all_means(monkeypatch):
    monkeypatch.setattr("primbench.measuring.device._nvml", lambda: None)  # a driver is there (checked first)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    assert gpus.visible_devices() == ["2", "3"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,-1,2")  # CUDA stops at the first invalid entry
    assert gpus.visible_devices() == ["1"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert gpus.visible_devices() == []


def test_only_no_gpus_or_gpus_0_is_the_one_gpu_run_and_mode_needs_gpus():
    assert gpus.is_today(None) and gpus.is_today("0")
    assert not gpus.is_today("1") and not gpus.is_today("0,1") and not gpus.is_today("all")
    gpus.check_mode("all", "replicate")
    with pytest.raises(UserError, match="give --gpus too"):
        gpus.check_mode(None, "shard")


def test_shards_hold_every_case_once_keep_inputs_together_and_balance_the_cost(repo):
    cases = load_config(repo / "configs" / "default.yaml").cases()
    shards = gpus.split(cases, 3)
    assert sorted(c.key for shard in shards for c in shard) == sorted(c.key for c in cases)
    owner = {}
    for index, shard in enumerate(shards):
        for case in shard:
            assert owner.setdefault(input_key(case), index) == index  # an input is made on one GPU only
    costs = [sum(map(gpus.case_cost, shard)) for shard in shards]
    largest_group = max(sum(gpus.case_cost(c) for c in cases if input_key(c) == key) for key in owner)
    assert max(costs) - min(costs) <= largest_group, costs
    for shard in shards:  # each shard in the order the one-GPU run would take it
        assert [c.key for c in shard] == [c.key for c in order_cases(shard)]


def test_more_gpus_than_inputs_leaves_some_shards_empty(repo):
    cases = load_config(repo / "configs" / "default.yaml").cases()[:1]
    shards = gpus.split(cases, 4)
    assert sorted(map(len, shards)) == [0, 0, 0, 1]
