"""The command line as a tool: plugins with the user's own kernels, subsets without editing YAML,
--variant with no config, --version; every mistake one line and exit 2."""

import subprocess
import sys
import textwrap

import pytest

from primbench.errors import UserError
from tests.conftest import EXAMPLE_PLUGIN, REPO

EXAMPLE_CONFIG = EXAMPLE_PLUGIN.parent / "config.yaml"
TOY_PLUGIN = REPO / "tests" / "plugins" / "toy_scale.py"


def primbench(cwd, *args):
    """The CLI run in `cwd` (bench.py, the shim; tests/e2e/test_install.py runs the installed command)."""
    return subprocess.run([sys.executable, REPO / "bench.py", *map(str, args)], cwd=cwd, capture_output=True, text=True)


def one_line_error(result, *words):
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and lines[0].startswith("primbench: ") and "Traceback" not in result.stderr, result.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def cases_listed(result):
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[:-1]


def test_a_dry_run_narrowed_to_scan_at_2_28_lists_exactly_those_cases(repo):
    from primbench.config.loading import load_config

    narrowed = cases_listed(primbench(repo, "run", "configs/default.yaml", "--only", "scan/*", "--sizes", "2^28", "--dry-run"))
    expected = [c.key for c in load_config(repo / "configs/default.yaml").cases() if c.op == "scan" and c.n == 2**28]
    assert narrowed == expected and len(expected) > 10


def test_filters_intersect_the_config(repo):
    listed = cases_listed(primbench(repo, "run", "configs/default.yaml", "--only", "reduce/vector_*,reduce/cub_*",
                                    "--sizes", "2^25,2^28", "--blocks", "256", "--dry-run"))
    assert listed
    for key in listed:
        op, variant, _dtype, n, block, _distribution = key.split("/")[:6]
        assert op == "reduce" and (variant.startswith("vector_") or variant.startswith("cub_"))
        assert n in ("n=33554432", "n=268435456") and block in ("block=256", "block=lib")
    assert any("/cub_device_reduce/" in key for key in listed)


def test_a_filter_that_matches_nothing_is_one_error_naming_it(repo):
    one_line_error(primbench(repo, "run", "configs/default.yaml", "--only", "scan/no_such_*", "--dry-run"), "--only", "no_such_")
    one_line_error(primbench(repo, "run", "configs/default.yaml", "--sizes", "2^29", "--dry-run"), "--sizes", "536870912")
    one_line_error(primbench(repo, "run", "configs/default.yaml", "--blocks", "48", "--dry-run"), "--blocks 48")
    one_line_error(primbench(repo, "run", "configs/default.yaml", "--sizes", "2^20,,3", "--dry-run"), "--sizes")
    one_line_error(primbench(repo, "run", "configs/progression.yaml", "--only", "scan", "--dry-run"), "--only", "scan/*")


def test_each_filter_matching_but_not_together_is_one_error(repo):
    # progression.yaml has reduce at 2^25 only; default.yaml's scan sweep has no 2^25 at block 64.
    result = primbench(repo, "run", "configs/default.yaml", "--only", "stencil/*", "--sizes", "1000", "--dry-run")
    one_line_error(result, "together match no case")


def test_variant_needs_no_config_and_takes_the_default_policy(repo, tmp_path):
    listed = cases_listed(primbench(tmp_path, "run", "--variant", "reduce/cub_device_reduce", "--sizes", "2^28", "--dry-run"))
    assert listed == ["reduce/cub_device_reduce/float32/n=268435456/block=lib/uniform"]
    listed = cases_listed(primbench(tmp_path, "run", "--variant", "scan/decoupled_*", "--sizes", "1000", "--dry-run"))
    assert listed and all(key.startswith("scan/decoupled_") and "/block=256/" in key for key in listed)
    one_line_error(primbench(tmp_path, "run", "--variant", "reduce/nope"), "--variant", "reduce/nope")
    one_line_error(primbench(tmp_path, "run", "--variant", "nosuchop/x"), "unknown op")
    one_line_error(primbench(tmp_path, "run", "configs/default.yaml", "--variant", "reduce/cub_device_reduce"), "not both")
    one_line_error(primbench(tmp_path, "run"), "no config given")


def test_a_bundled_config_runs_by_name_from_any_folder(tmp_path):
    by_path = cases_listed(primbench(tmp_path, "run", "configs/progression.yaml", "--dry-run"))
    by_name = cases_listed(primbench(tmp_path, "run", "progression", "--dry-run"))
    assert by_path == by_name and by_path
    one_line_error(primbench(tmp_path, "run", "configs/nope.yaml", "--dry-run"), "no such config file", "progression")


def test_version_and_run_help_say_what_they_should(repo):
    from primbench import __version__

    version = primbench(repo, "--version")
    assert version.returncode == 0 and version.stdout.strip() == f"primbench {__version__}"
    helped = primbench(repo, "run", "--help")
    assert helped.returncode == 0 and "required unless --resume or --variant" in " ".join(helped.stdout.split())


def test_the_example_plugin_runs_from_its_config_beside_the_built_in_variants(tmp_path):
    listed = cases_listed(primbench(tmp_path, "run", EXAMPLE_CONFIG, "--dry-run"))
    variants = {key.split("/")[1] for key in listed}
    assert variants == {"my_float4_atomic", "vector_load_sum", "cub_device_reduce"}
    assert "reduce/my_float4_atomic/float32/n=16777219/block=256/uniform" in listed
    listing = primbench(tmp_path, "list", "--plugin", EXAMPLE_PLUGIN, "--op", "reduce")
    assert listing.returncode == 0 and f"[plugin {EXAMPLE_PLUGIN}]" in listing.stdout


def test_a_plugin_on_the_command_line_is_recorded_with_the_config(repo, tmp_path):
    config = tmp_path / "mine.yaml"
    config.write_text("sweeps:\n  - {op: reduce, variants: [my_float4_atomic], sizes: [1000]}\n")
    one_line_error(primbench(tmp_path, "run", config, "--dry-run"), "no reduce variant matches 'my_float4_atomic'")
    listed = cases_listed(primbench(tmp_path, "run", config, "--plugin", EXAMPLE_PLUGIN, "--dry-run"))
    assert listed == ["reduce/my_float4_atomic/float32/n=1000/block=256/uniform"]
    # The header records config.resolved(), with the plugins' absolute paths (for --resume). Read in a
    # child process: a plugin loaded here would join the globs of every other test's configs.
    probe = "import sys; from primbench.config.loading import load_config; print(load_config(sys.argv[1]).resolved()['plugins'])"
    resolved = subprocess.run([sys.executable, "-c", probe, EXAMPLE_CONFIG], cwd=REPO, capture_output=True, text=True)
    assert resolved.stdout.strip() == str([str(EXAMPLE_PLUGIN)]), resolved.stderr


def _plugin(tmp_path, body: str):
    path = tmp_path / "bad_plugin.py"
    path.write_text(textwrap.dedent(body))
    return path


def test_plugins_given_with_variant_are_recorded_for_resume(tmp_path):
    from primbench import registry
    from primbench.cli.parser import parser as _parser
    from primbench.cli.run import run_config

    args = _parser().parse_args(["run", "--variant", "reduce/cub_device_reduce", "--plugin", str(TOY_PLUGIN), "--sizes", "1000"])
    assert run_config(args).resolved()["plugins"] == [str(TOY_PLUGIN)]
    assert not registry.plugins()  # run_config records the path; main() is what imports the plugin


def test_a_broken_plugin_is_one_line_naming_the_file_and_line(tmp_path):
    syntax = _plugin(tmp_path, "def prepare(:\n")
    one_line_error(primbench(tmp_path, "list", "--plugin", syntax), str(syntax), "line 1", "SyntaxError")
    raising = _plugin(tmp_path, "x = 1\nraise RuntimeError('my mistake')\n")
    one_line_error(primbench(tmp_path, "list", "--plugin", raising), "line 2", "RuntimeError: my mistake")
    clash = _plugin(tmp_path, """
        from primbench.api import Variant, register_variant
        from primbench import registry
        builtin = registry.get("reduce", "cub_device_reduce")
        import dataclasses
        register_variant(dataclasses.replace(builtin))
    """)
    one_line_error(primbench(tmp_path, "list", "--plugin", clash), "registered twice")
    one_line_error(primbench(tmp_path, "list", "--plugin", tmp_path / "missing.py"), "no such file")
    one_line_error(primbench(tmp_path, "list", "--plugin", tmp_path), "is a folder")
    exits = _plugin(tmp_path, "import sys\nsys.exit(3)\n")
    one_line_error(primbench(tmp_path, "list", "--plugin", exits), "SystemExit")


def test_a_config_naming_a_missing_plugin_is_one_line_with_its_line(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("name: c\nplugins: [nowhere.py]\nsweeps:\n  - {op: reduce, sizes: [1000]}\n")
    one_line_error(primbench(tmp_path, "run", config, "--dry-run"), "c.yaml:2", "plugins[0]", "no such file")



def test_compile_with_plugins_builds_their_kernels_for_hopper_and_ampere_without_warnings(tmp_path):
    compiled = primbench(tmp_path, "compile", "--plugin", EXAMPLE_PLUGIN, "--plugin", TOY_PLUGIN, "--arch", "sm_90", "sm_80")
    assert compiled.returncode == 0, compiled.stderr
    lines = compiled.stdout.strip().splitlines()
    assert all("warnings" not in line for line in lines) and len(lines) == 4, lines  # only the plugins' two sources
    assert f"{EXAMPLE_PLUGIN.with_suffix('.cu')} sm_90: 3 kernels" in compiled.stdout
    assert f"{TOY_PLUGIN.with_suffix('.cu')} sm_80: 1 kernels" in compiled.stdout


def test_a_plugin_adds_a_new_op_with_its_checks(tmp_path):
    listed = cases_listed(primbench(tmp_path, "run", TOY_PLUGIN.with_suffix(".yaml"), "--dry-run"))
    assert listed[0] == "toy_scale/one_per_thread/float32/n=1/block=128/uniform" and len(listed) == 6


def test_a_narrowed_run_header_reads_back_as_the_same_cases_for_resume(repo):
    from primbench.config import subset
    from primbench.config.loading import config_from_header, load_config
    from primbench.runfile.records import RunHeader

    config = load_config(repo / "configs/default.yaml")
    for narrowed in (subset.narrow(config, blocks=(512,)), subset.narrow(config, only=("scan/*",), sizes=(2**28,)),
                     subset.narrow(config, only=("reduce/cub_*",), blocks=(1024,))):
        again = config_from_header(RunHeader(run_id="r", config=narrowed.resolved()), "run.jsonl")
        assert [c.key for c in again.cases()] == [c.key for c in narrowed.cases()] != []
    assert all(c.block in (512, None) for c in subset.narrow(config, blocks=(512,)).cases())


def test_a_plugin_that_fails_half_way_leaves_nothing_registered(tmp_path):
    from primbench import ops, registry

    broken = tmp_path / "half.py"
    broken.write_text(TOY_PLUGIN.read_text().replace("toy_scale", "toy_half") + "\nraise RuntimeError('boom')\n")
    (tmp_path / "toy_half.cu").write_text(TOY_PLUGIN.with_suffix(".cu").read_text())  # its source is checked
    for _ in range(2):  # the same cause both times, not "declared twice"
        with pytest.raises(UserError, match="RuntimeError: boom"):
            registry.load_plugin(broken)
    assert "toy_half" not in registry.ops() and "toy_half" not in ops.declared_ops()
