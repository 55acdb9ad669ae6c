"""The hostile-input corpus: configs, run files, output paths and command lines that a careless or
hostile user could give primbench. Each case names its class, how its inputs are made, the command,
and the exit code it must get (2 for unusable input, 3 where the command needs a GPU); every case
must answer in one line, without a traceback, within the timeout and memory cap, leaving every
input as it was and no file behind (tests/hostile/test_corpus.py)."""

from __future__ import annotations

import functools
import gzip
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import REPO, RUNS

GOOD_RUN = RUNS / "progression.jsonl.gz"  # a small real H200 run: 20 reduce cases
BAD_CONFIGS = REPO / "tests" / "bad_configs"
NO_GPU = 3  # the CLI's exit code for a command that needs a GPU on a machine without one


@dataclass
class Hostile:
    id: str
    klass: str  # config, run file, output path, argument
    argv: list[str]  # "{dir}" is the case's folder, holding good.jsonl (and what `make` writes)
    make: object = None  # make(folder): write the hostile input
    code: int = 2
    says: str = ""  # a fragment the one line must hold
    no_gpu_ok: bool = False  # a command that needs a GPU may answer "no NVIDIA GPU" (exit 3) first
    extra: dict = field(default_factory=dict)


def good_records() -> list[dict]:
    return [json.loads(line) for line in gzip.decompress(GOOD_RUN.read_bytes()).decode().splitlines()]


def write_records(path: Path, records, tail: str = "") -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + tail)


def _first_case(records):
    return next(r for r in records if r["kind"] == "case")


def _writes(text: str | bytes, name: str):
    def make(folder: Path):
        target = folder / name
        (target.write_bytes if isinstance(text, bytes) else target.write_text)(text)
    return make


# -- configs: `run CONFIG --dry-run` (validation needs no GPU) ------------------------------------
def _config_cases() -> list[Hostile]:
    cases = [Hostile(f"config/{p.stem}", "config", ["run", str(p), "--dry-run"]) for p in sorted(BAD_CONFIGS.glob("*.yaml"))]
    sweep = "sweeps:\n  - op: reduce\n    variants: [reduce2_sequential]\n"
    generated = {
        "alias_bomb": "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
            f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(9)) + sweep,
        "alias_bomb_under_unknown_key": "junk:\n  a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
            f"  {chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
            f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
            for i in range(9)) + sweep,
        "nesting_10000_deep": "sweeps: " + "[" * 10000 + "]" * 10000 + "\n",
        "size_of_1000_digits": sweep + "    sizes: [" + "9" * 1000 + "]\n",
        "size_a_float": sweep + "    sizes: [1.5]\n",
        "size_an_empty_power": sweep + "    sizes: ['2^']\n",
        "size_power_of_a_negative": sweep + "    sizes: ['2^-3']\n",
        "millions_of_cases": "sweeps:\n  - op: reduce\n    variants: ['*']\n    sizes: [" + ", ".join(str(i) for i in range(1, 20001))
                             + "]\n    distributions: [uniform, normal, ill_conditioned]\n    dtypes: [float32, float16, bfloat16, int32]\n",
        "merge_of_a_list": "base: &b [1, 2]\nsweeps:\n  - <<: *b\n    op: reduce\n",
        "tab_indented": "sweeps:\n\t- op: reduce\n",
        "two_documents": sweep + "---\n" + sweep,
        "null_document": "~\n",
        "sweeps_a_string": "sweeps: reduce\n",
        "sweeps_a_mapping": "sweeps: {op: reduce}\n",
        "block_size_zero": sweep + "    block_sizes: [0]\n",
        "block_size_negative": sweep + "    block_sizes: [-32]\n",
        "no_dtypes": sweep + "    dtypes: []\n",
        "no_sizes": sweep + "    sizes: []\n",
        "min_samples_huge": "timing: {min_samples: 1000000000000}\n" + sweep,
        "a_json_list": "[1, 2, 3]\n",
        "megabyte_key": "k" * (1 << 20) + ": 1\n" + sweep,
        "megabyte_value": "name: " + "v" * (1 << 20) + "\n" + sweep,
        "plugin_missing": "plugins: [nowhere/missing.py]\n" + sweep,
        "plugin_not_python": "plugins: [../good.jsonl]\n" + sweep,
        "op_a_number": "sweeps:\n  - op: 7\n",
        "variant_glob_matching_nothing": "sweeps:\n  - op: reduce\n    variants: ['nothing_*']\n",
        "distribution_a_list_of_lists": sweep + "    distributions: [[uniform]]\n",
        "output_a_list": "output: [a, b]\n" + sweep,
    }
    for name, text in generated.items():
        cases.append(Hostile(f"config/{name}", "config", ["run", "{dir}/config.yaml", "--dry-run"], _writes(text, "config.yaml")))
    binary = {"binary_garbage": bytes(range(256)) * 64, "latin1_bytes": "name: caf\xe9\n".encode("latin-1") + sweep.encode()}
    for name, data in binary.items():
        cases.append(Hostile(f"config/{name}", "config", ["run", "{dir}/config.yaml", "--dry-run"], _writes(data, "config.yaml")))
    cases.append(Hostile("config/a_folder", "config", ["run", "{dir}", "--dry-run"]))
    cases.append(Hostile("config/missing", "config", ["run", "{dir}/missing.yaml", "--dry-run"]))
    plugin_faults = {"syntax_error": "def broken(:\n", "raises_on_import": "raise RuntimeError('plugin says no')\n",
                     "registers_a_duplicate": "from primbench.api import register_variant\nfrom primbench import registry\n"
                                              "register_variant(registry.get('reduce', 'reduce2_sequential'))\n"}
    for name, text in plugin_faults.items():
        cases.append(Hostile(f"config/plugin_{name}", "config", ["list", "--plugin", "{dir}/plugin.py"], _writes(text, "plugin.py")))
    return cases


# -- run files: each damage given to the gates (`check`, as the new run and as the baseline, and
# `baseline`), and the commonest to `report` and `compare` --------------------------------------
def _edit(change):
    def make(folder: Path):
        records = good_records()
        change(records)
        write_records(folder / "bad.jsonl", records)
    return make


def _bytes_after_header(data: bytes):
    def make(folder: Path):
        header = gzip.decompress(GOOD_RUN.read_bytes()).split(b"\n")[0]
        (folder / "bad.jsonl").write_bytes(header + b"\n" + data)
    return make


def _set(path: str, value):
    """Set a field of the header ('header.device') or of the first case ('n', 'samples.cold_ms.0')."""
    def change(records):
        where, *rest = path.split(".")
        target = records[0] if where == "header" else _first_case(records)
        keys = rest if where == "header" else [where, *rest]
        for key in keys[:-1]:
            target = target[int(key)] if isinstance(target, list) else target[key]
        last = keys[-1]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value
    return change


@functools.lru_cache(maxsize=1)
def _bomb_bytes() -> bytes:
    header = gzip.decompress(GOOD_RUN.read_bytes()).split(b"\n")[0]
    return gzip.compress(header + b"\n" + b" " * (64 << 20), compresslevel=9)  # 64 MiB in about 64 KB


@functools.lru_cache(maxsize=1)
def _tiny_records_bytes() -> bytes:
    header = gzip.decompress(GOOD_RUN.read_bytes()).split(b"\n")[0]
    # 6 million 10-byte lines: 60 MB unpacked, several GB as Python objects if all were parsed first
    return gzip.compress(header + b"\n" + b'{"kind":0}\n' * 6_000_000, compresslevel=9)


def _tiny_records(folder: Path):
    (folder / "bad.jsonl.gz").write_bytes(_tiny_records_bytes())


def _gzip_bomb(folder: Path):
    (folder / "bad.jsonl.gz").write_bytes(_bomb_bytes())


def _joined_gzip(folder: Path):
    (folder / "bad.jsonl.gz").write_bytes(GOOD_RUN.read_bytes() + GOOD_RUN.read_bytes())


RUN_DAMAGE = {
    "nan_sample": _edit(_set("samples.cold_ms.0", float("nan"))),
    "infinite_sample": _edit(_set("samples.cold_ms.0", float("inf"))),
    "negative_sample": _edit(_set("samples.cold_ms.1", -0.5)),
    "zero_sample": _edit(_set("samples.cold_ms.2", 0.0)),
    "string_sample": _edit(_set("samples.cold_ms.0", "fast")),
    "samples_a_list": _edit(_set("samples", [0.1, 0.2])),
    "ok_without_samples": _edit(_set("samples", {})),
    "duplicate_case": _edit(lambda records: records.insert(2, dict(_first_case(records)))),
    "string_n": _edit(_set("n", "33554432")),
    "n_past_2_40": _edit(_set("n", 2**60)),
    "params_a_list": _edit(_set("params", ["radius", 4])),
    "status_unknown": _edit(_set("status", "great")),
    "key_not_its_fields": _edit(_set("key", "reduce/other/float32/n=1/block=256/uniform")),
    "header_device_a_string": _edit(_set("header.device", "H200")),
    "header_variants_a_list": _edit(_set("header.variants", ["reduce/x"])),
    "header_variant_info_a_string": _edit(lambda records: records[0]["variants"].update({"reduce/x": "x"})),
    "header_peak_a_string": _edit(_set("header.device.peak_gbps", "fast")),
    "header_variant_order_a_string": _edit(lambda records: [info.update(order="first") for info in records[0]["variants"].values()]),
    "header_variant_work_span_a_number": _edit(lambda records: [info.update(work_span=7) for info in records[0]["variants"].values()]),
    "header_copy_samples_negative": _edit(_set("header.copy.samples_ms", [-1.0])),
    "header_read_bytes_a_string": _edit(lambda records: records[0].update(read={"bytes": "x", "samples_ms": [1.0]})),
    "header_variant_traffic_unknown": _edit(lambda records: [info.update(traffic="write_only") for info in records[0]["variants"].values()]),
    "schema_99": _edit(_set("header.schema", 99)),
    "schema_0": _edit(_set("header.schema", 0)),
    "schema_a_string": _edit(_set("header.schema", "2")),
    "no_header": _edit(lambda records: records.pop(0)),
    "second_header": _edit(lambda records: records.insert(3, dict(records[0]))),
    "unknown_kind": _edit(lambda records: records.insert(2, {"kind": "banana"})),
    "a_list_line": _edit(lambda records: records.insert(2, [1, 2])),
    "nested_100000_deep": _bytes_after_header(b'{"kind": "case", "x": ' + b"[" * 100000 + b"]" * 100000 + b"}\n"),
    "integer_of_5000_digits": _bytes_after_header(b'{"kind": "case", "n": ' + b"7" * 5000 + b"}\n"),
    "junk_padding_after_header": _bytes_after_header(b"\0" * (8 << 20)),
    "blank_lines_after_header": _bytes_after_header(b"\n" * 1000),
    "a_line_of_20_mib": _bytes_after_header(b'{"kind": "case", "reason": "' + b"x" * (20 << 20) + b'"}\n'),
    "latin1_bytes": _bytes_after_header(b'{"kind": "case", "reason": "caf\xe9"}\n'),
    "not_json_in_the_middle": _bytes_after_header(b"{not json\n" + b'{"kind": "end"}\n'),
    "empty_file": _writes(b"", "bad.jsonl"),
    "binary_file": _writes(bytes(range(256)) * 16, "bad.jsonl"),
    "gzip_bomb": _gzip_bomb,
    "gzip_of_6_million_tiny_records": _tiny_records,
    "gzip_magic_only": _writes(b"\x1f\x8b but not gzip after all", "bad.jsonl.gz"),
    "two_gzip_streams_joined": _joined_gzip,
}
GATE_ONLY = {  # damage that is only damage to a gate: the report and compare show it as it is
    "interrupted_run": _edit(lambda records: records.pop()),
    "finished_with_no_cases": _edit(lambda records: (records.__setitem__(slice(1, -1), []),
                                                     records[-1].update(ok=0, failed=0, skipped=0))),
    "a_failed_case": _edit(lambda records: (_set("status", "failed")(records),
                                            records[-1].update(ok=records[-1]["ok"] - 1, failed=1))),
}


def _bad_path(folder: Path) -> str:
    return str(next(p for p in folder.iterdir() if p.name.startswith("bad.")))


def _run_file_cases() -> list[Hostile]:
    cases = []
    for name, make in RUN_DAMAGE.items():
        cases.append(Hostile(f"run file/{name}/check", "run file", ["check", "{bad}", "--baseline", "{dir}/good.jsonl"], make))
        cases.append(Hostile(f"run file/{name}/check baseline", "run file", ["check", "{dir}/good.jsonl", "--baseline", "{bad}"], make))
        cases.append(Hostile(f"run file/{name}/baseline", "run file", ["baseline", "{bad}", "--folder", "{dir}/baselines"], make))
    for name in ("nan_sample", "duplicate_case", "header_device_a_string", "junk_padding_after_header", "gzip_bomb",
                 "schema_99", "nested_100000_deep", "empty_file", "header_variant_order_a_string",
                 "header_variant_work_span_a_number"):
        cases.append(Hostile(f"run file/{name}/report", "run file", ["report", "{bad}", "-o", "{dir}/out.html"], RUN_DAMAGE[name]))
        cases.append(Hostile(f"run file/{name}/compare", "run file", ["compare", "{dir}/good.jsonl", "{bad}"], RUN_DAMAGE[name]))
    for name in ("nan_sample", "duplicate_case", "schema_99", "gzip_bomb"):
        cases.append(Hostile(f"run file/{name}/replicas", "run file", ["replicas", "{dir}/good.jsonl", "{bad}"], RUN_DAMAGE[name]))
    cases.append(Hostile("run file/nan_sample/resume on gpus", "run file", ["run", "--resume", "{bad}", "--gpus", "0,1"],
                         RUN_DAMAGE["nan_sample"]))
    cases.append(Hostile("run file/interrupted_run/check", "run file", ["check", "{bad}", "--baseline", "{dir}/good.jsonl"],
                         GATE_ONLY["interrupted_run"], says="interrupted"))
    cases.append(Hostile("run file/interrupted_run/baseline", "run file", ["baseline", "{bad}", "--folder", "{dir}/baselines"],
                         GATE_ONLY["interrupted_run"], says="interrupted"))
    cases.append(Hostile("run file/finished_with_no_cases/baseline", "run file",
                         ["baseline", "{bad}", "--folder", "{dir}/baselines"], GATE_ONLY["finished_with_no_cases"], says="no cases"))
    cases.append(Hostile("run file/a_failed_case/baseline", "run file", ["baseline", "{bad}", "--folder", "{dir}/baselines"],
                         GATE_ONLY["a_failed_case"], says="failed"))
    for command in (["report"], ["check"], ["baseline"], ["compare", "{dir}/good.jsonl"], ["publish"],
                    ["export", "--format", "csv"]):
        cases.append(Hostile(f"run file/missing/{command[0]}", "run file", [*command, "{dir}/missing.jsonl"]))
    cases.append(Hostile("run file/a_folder_of_nothing/report", "run file", ["report", "{dir}/empty"],
                         lambda folder: (folder / "empty").mkdir()))
    return cases


# -- output paths: never onto an input, never half-written --------------------------------------
def _second_run(folder: Path):
    write_records(folder / "new.jsonl", good_records())


def _a_file_named(name: str):
    return _writes("I am a file, not a folder\n", name)


def _output_cases() -> list[Hostile]:
    both = _second_run
    rows = {
        "report_onto_its_run": (["report", "{dir}/good.jsonl", "-o", "{dir}/good.jsonl"], None),
        "report_onto_its_run_by_another_name": (["report", "{dir}/good.jsonl", "-o", "{dir}/./sub/../good.jsonl"],
                                                lambda f: (f / "sub").mkdir()),
        "report_under_a_file": (["report", "{dir}/good.jsonl", "-o", "{dir}/afile/out.html"], _a_file_named("afile")),
        "report_onto_a_folder": (["report", "{dir}/good.jsonl", "-o", "{dir}/folder"], lambda f: (f / "folder").mkdir()),
        "compare_html_onto_the_baseline": (["compare", "{dir}/good.jsonl", "{dir}/new.jsonl", "--html", "{dir}/good.jsonl"], both),
        "compare_html_onto_the_new_run": (["compare", "{dir}/good.jsonl", "{dir}/new.jsonl", "--html", "{dir}/new.jsonl"], both),
        "compare_html_under_a_file": (["compare", "{dir}/good.jsonl", "{dir}/new.jsonl", "--html", "{dir}/afile/c.html"],
                                      lambda f: (both(f), _a_file_named("afile")(f))),
        "check_junit_onto_the_baseline": (["check", "{dir}/new.jsonl", "--baseline", "{dir}/good.jsonl", "--junit", "{dir}/good.jsonl"], both),
        "check_markdown_onto_the_run": (["check", "{dir}/new.jsonl", "--baseline", "{dir}/good.jsonl", "--markdown", "{dir}/new.jsonl"], both),
        "check_junit_under_a_file": (["check", "{dir}/new.jsonl", "--baseline", "{dir}/good.jsonl", "--junit", "{dir}/afile/j.xml"],
                                     lambda f: (both(f), _a_file_named("afile")(f))),
        "publish_into_a_file": (["publish", "{dir}/good.jsonl", "-o", "{dir}/afile"], _a_file_named("afile")),
        "publish_under_a_file": (["publish", "{dir}/good.jsonl", "-o", "{dir}/afile/site"], _a_file_named("afile")),
        "publish_onto_its_runs_folder": (["publish", "{dir}/runs", "-o", "{dir}/runs"],
                                         lambda f: ((f / "runs").mkdir(), write_records(f / "runs" / "r.jsonl", good_records()))),
        "export_onto_its_run": (["export", "{dir}/good.jsonl", "--format", "csv", "-o", "{dir}/good.jsonl"], None),
        "baseline_folder_is_a_file": (["baseline", "{dir}/good.jsonl", "--folder", "{dir}/afile"], _a_file_named("afile")),
        "baseline_onto_itself": (["baseline", "{dir}/baselines/nvidia-h200.jsonl.gz", "--folder", "{dir}/baselines"],
                                 lambda f: ((f / "baselines").mkdir(), shutil.copy(GOOD_RUN, f / "baselines" / "nvidia-h200.jsonl.gz"))),
    }
    return [Hostile(f"output path/{name}", "output path", argv, make) for name, (argv, make) in rows.items()]


# -- command lines -------------------------------------------------------------------------------
def _argument_cases() -> list[Hostile]:
    default = str(REPO / "configs" / "default.yaml")
    rows = {
        "no_command": ([], 2),
        "unknown_command": (["bogus"], 2),
        "unknown_option": (["report", "--bogus", "{dir}/good.jsonl"], 2),
        "run_with_nothing_to_run": (["run"], 2),
        "run_sizes_not_numbers": (["run", default, "--sizes", "abc", "--dry-run"], 2),
        "run_sizes_empty": (["run", default, "--sizes", ",", "--dry-run"], 2),
        "run_blocks_zero": (["run", default, "--blocks", "0", "--dry-run"], 2),
        "run_blocks_not_a_power_of_two": (["run", default, "--blocks", "100", "--dry-run"], 2),
        "run_only_matching_nothing": (["run", default, "--only", "nothing/*", "--dry-run"], 2),
        "run_only_of_1000_chars": (["run", default, "--only", "x" * 1000, "--dry-run"], 2),
        "run_variant_unknown": (["run", "--variant", "reduce/nope", "--dry-run"], 2),
        "run_variant_without_op": (["run", "--variant", "reduce", "--dry-run"], 2),
        "run_config_and_resume": (["run", default, "--resume", "{dir}/good.jsonl"], 2),
        "resume_a_missing_run": (["run", "--resume", "{dir}/missing.jsonl"], 2),
        "resume_a_finished_run": (["run", "--resume", "{dir}/good.jsonl"], 2),
        "compile_for_sm_999": (["compile", "--arch", "sm_999"], 2),
        "compile_for_nonsense": (["compile", "--arch", "banana"], 2),
        "compile_for_a_virtual_arch": (["compile", "--arch", "compute_90"], 2),
        "compare_one_run": (["compare", "{dir}/good.jsonl"], 2),
        "export_unknown_format": (["export", "{dir}/good.jsonl", "--format", "xlsx"], 2),
        "ab_across_two_ops": (["ab", "reduce/vector_load_sum", "scan/decoupled_lookback"], 2),
        "ab_with_no_rounds": (["ab", "reduce/vector_load_sum", "reduce/vector_load_sum", "--rounds", "0"], 2),
        "ab_threshold_past_one": (["ab", "reduce/vector_load_sum", "reduce/vector_load_sum", "--threshold", "2"], 2),
        "ab_unknown_variant": (["ab", "reduce/nope", "reduce/vector_load_sum"], 2),
        "ab_chart_under_a_file": (["ab", "reduce/vector_load_sum", "reduce/vector_load_sum", "--chart", "{dir}/good.jsonl/x.png"], 2),
        "ab_base_no_such_commit": (["ab", "reduce/vector_load_sum", "--base", "0000000000000000000000000000000000000000"], 2),
        "ab_base_option_like": (["ab", "reduce/vector_load_sum", "--base=--exec=/bin/false"], 2),
        "ab_base_range": (["ab", "reduce/vector_load_sum", "--base", "HEAD~1..HEAD"], 2),
        "ab_base_glob": (["ab", "reduce/*", "--base", "HEAD"], 2),
        "ab_b_glob_with_base": (["ab", "reduce/vector_load_sum", "reduce/vector_*", "--base", "HEAD~1"], 2),
        "ab_no_b_and_no_base": (["ab", "reduce/vector_load_sum"], 2),
        "compare_metric_unknown": (["compare", "--metric", "speed", "{dir}/good.jsonl", "{dir}/good.jsonl"], 2),
        "compare_unknown_reference": (["compare", "ref:nothing", "{dir}/good.jsonl"], 2),
        "check_a_published_reference": (["check", "{dir}/good.jsonl", "--baseline", "ref:seed002_rtx3080"], 2),
        "check_without_a_baseline_for_its_gpu": (["check", "{dir}/good.jsonl", "--baseline", "{dir}/nothing.jsonl.gz"], 2),
        "report_a_glob_matching_nothing": (["report", "{dir}/*.nothing"], 2),
        "list_with_a_missing_plugin": (["list", "--plugin", "{dir}/missing.py"], 2),
        "run_gpus_negative": (["run", default, "--gpus", "-1"], 2),
        "run_gpus_named_twice": (["run", default, "--gpus", "0,0"], 2),
        "run_gpus_not_a_number": (["run", default, "--gpus", "x"], 2),
        "run_gpus_empty": (["run", default, "--gpus", ""], 2),
        "run_gpus_a_range": (["run", default, "--gpus", "0-3"], 2),
        "run_gpus_past_any_host": (["run", default, "--gpus", "100000"], 2),
        "run_gpus_of_1000_chars": (["run", default, "--gpus", "0," * 500], 2),
        "run_mode_without_gpus": (["run", default, "--mode", "shard", "--dry-run"], 2),
        "run_mode_unknown": (["run", default, "--gpus", "all", "--mode", "mirror"], 2),
        "resume_with_mode": (["run", "--resume", "{dir}/good.jsonl", "--mode", "replicate"], 2),
        "resume_a_one_gpu_run_on_gpu_1": (["run", "--resume", "{dir}/good.jsonl", "--gpus", "1"], 2),
        "resume_a_missing_run_on_gpus": (["run", "--resume", "{dir}/missing.jsonl", "--gpus", "0,1"], 2),
        "replicas_of_one_run": (["replicas", "{dir}/good.jsonl"], 2),
        "replicas_threshold_past_one": (["replicas", "{dir}/good.jsonl", "{dir}/good.jsonl", "--threshold", "2"], 2),
        "replicas_threshold_not_a_number": (["replicas", "{dir}/good.jsonl", "{dir}/good.jsonl", "--threshold", "nan"], 2),
        "replicas_of_a_missing_run": (["replicas", "{dir}/good.jsonl", "{dir}/missing.jsonl"], 2),
        "run_gpus_99_on_a_machine_without_a_gpu": (["run", default, "--gpus", "99"], NO_GPU),
        "run_gpus_all_on_a_machine_without_a_gpu": (["run", default, "--gpus", "all", "--mode", "replicate"], NO_GPU),
        "run_on_a_machine_without_a_gpu": (["run", default], NO_GPU),
        "info_on_a_machine_without_a_gpu": (["info"], NO_GPU),
        "profile_no_such_target": (["profile", "{dir}/nothing.yaml"], 2),
        "profile_missing_run_file": (["profile", "{dir}/gone.jsonl.gz"], 2),
        "profile_sizes_garbage": (["profile", default, "--sizes", "abc"], 2),
        "profile_only_matches_nothing": (["profile", default, "--only", "nope/*"], 2),
        "profile_output_under_a_file": (["profile", default, "-o", "{dir}/good.jsonl/x.counters.json"], 2),
        "profile_on_a_machine_without_a_gpu": (["profile", default, "--sizes", "2^20"], NO_GPU),
    }
    return [Hostile(f"argument/{name}", "argument", argv, code=code, no_gpu_ok=code == NO_GPU) for name, (argv, code) in rows.items()]


def corpus() -> list[Hostile]:
    return _config_cases() + _run_file_cases() + _output_cases() + _argument_cases()
