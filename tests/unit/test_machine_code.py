"""The machine-code identity (primbench/machine_code.py, primbench/cubin.py), from real NVRTC builds
for sm_90 on a machine with no GPU: a comment-only edit of a kernel file changes the source hash
and leaves the machine-code hash alone; one changed instruction changes both; an edit of another
kernel of the same file changes only the source hash; the cubin hashed is the one CuPy loads.
(Needs CuPy and NVRTC, as test_kernels_compile.py does: `make test-floors` leaves it out.)"""

from __future__ import annotations

import pytest

from primbench import build, machine_code, registry
from primbench.cubin import Cubin, NotACubin
from primbench.resources import KERNEL_DIR
from primbench.variant import Variant

ARCH = "sm_90"
KERNEL = "reduce2_sequential"


def _prepare(ctx):  # never called: the hashes read the plan's values, not its result
    return None


def _variant(tmp_path, name: str, edit=lambda text: text, **fields) -> Variant:
    """reduce2_sequential as a plugin would declare it, from a copy of kernels/reduce.cu in its own
    folder (so each copy is its own variant to the hash caches) with `edit` applied to the text."""
    folder = tmp_path / name
    folder.mkdir()
    source = folder / "reduce.cu"
    source.write_text(edit((KERNEL_DIR / "reduce.cu").read_text(encoding="utf-8")), encoding="utf-8")
    declared = dict(op="reduce", name=KERNEL, origin="test", series="test", order=0, prepare=_prepare,
                    block_sizes=(256,), bytes_model="n * itemsize", tolerance_model="", deterministic_expected=True,
                    source=str(source), kernels=(KERNEL,))
    return Variant(**{**declared, **fields})


def _in_kernel(name: str, old: str, new: str):
    """An edit replacing the first `old` after kernel `name`'s declaration."""
    def edit(text: str) -> str:
        head, _, body = text.partition(f"void {name}(")
        assert old in body
        return f"{head}void {name}(" + body.replace(old, new, 1)

    return edit


def _identities(variant: Variant) -> tuple[str, str]:
    machine = machine_code.identity(variant, ARCH)
    assert machine is not None and machine["arch"] == ARCH
    return variant.hash(), machine["hash"]


def test_a_comment_only_edit_changes_the_source_hash_and_leaves_the_machine_code_hash(tmp_path):
    def comments(text: str) -> str:  # a new first line (every line below moves) and a comment inside the kernel
        text = _in_kernel(KERNEL, "__syncthreads();", "__syncthreads();  // every lane's value is in")(text)
        return "// a comment added above everything\n" + text.replace("// reduce2: sequential", "// reduce2 (reworded):")

    source, machine = _identities(_variant(tmp_path, "as_is"))
    edited_source, edited_machine = _identities(_variant(tmp_path, "comments", comments))
    assert edited_source != source
    assert edited_machine == machine


def test_one_changed_instruction_changes_both_hashes(tmp_path):
    source, machine = _identities(_variant(tmp_path, "as_is"))
    # The padding value of a lane past n: one constant of one instruction.
    edited = _variant(tmp_path, "one_constant", _in_kernel(KERNEL, "g_in[i] : 0.0f", "g_in[i] : 1.0f"))
    edited_source, edited_machine = _identities(edited)
    assert edited_source != source and edited_machine != machine


def test_an_edit_of_another_kernel_in_the_file_changes_only_the_source_hash(tmp_path):
    # The source hash covers the whole file; the machine code is each of the variant's own kernels.
    source, machine = _identities(_variant(tmp_path, "as_is"))
    other = _variant(tmp_path, "other", _in_kernel("reduce1_interleaved_strided", "int index = 2 * s * tid;",
                                                   "int index = 4 * s * tid;"))
    other_source, other_machine = _identities(other)
    assert other_source != source and other_machine == machine


def test_the_plan_counts_in_the_machine_code_hash(tmp_path):
    _, machine = _identities(_variant(tmp_path, "as_is"))
    _, bumped = _identities(_variant(tmp_path, "bumped", version=2))  # the launch logic changed, by its declaration
    assert bumped != machine


def test_a_library_variant_has_no_machine_code_and_a_broken_kernel_none_either(tmp_path):
    library = next(v for v in registry.variants() if v.source is None)
    assert machine_code.identity(library, ARCH) is None
    broken = _variant(tmp_path, "broken", _in_kernel(KERNEL, "int tid = threadIdx.x;", "int tid = undefined_name;"))
    assert machine_code.identity(broken, ARCH) is None
    entries = machine_code.described([library], "9.0")
    assert "machine_code" not in entries[library.key] and entries[library.key]["hash"] == library.hash()


def test_the_run_architecture_is_the_gpus_own():
    assert machine_code.run_arch("9.0") == "sm_90" and machine_code.run_arch("8.0") == "sm_80"
    assert machine_code.run_arch(None) is None and machine_code.run_arch("nine") is None


def test_the_cubin_hashed_is_the_one_cupy_compiles_for_the_gpu(monkeypatch):
    # CuPy's RawModule path with its architecture pinned to sm_90 (it would ask the GPU), the cubin
    # caught where NVRTC hands it back: loading it then fails here, with no driver, or succeeds on a GPU.
    import cupy
    from cupy.cuda import compiler

    caught = {}
    compile_program = compiler._NVRTCProgram.compile

    def catch(self, options=(), log_stream=None):
        caught["cubin"], mapping = compile_program(self, options, log_stream)
        return caught["cubin"], mapping

    monkeypatch.setenv("CUPY_CACHE_IN_MEMORY", "1")
    monkeypatch.setattr(compiler._NVRTCProgram, "compile", catch)
    monkeypatch.setattr(compiler, "_get_arch_for_options_for_nvrtc", lambda arch=None: (f"-arch={ARCH}", "cubin"))
    path = build.source_path("reduce.cu")
    try:
        cupy._core.core.compile_with_cache(build.source_code(path), build._options(path), arch="90",
                                           prepend_cupy_headers=False, backend="nvrtc", name_expressions=(KERNEL,))
    except cupy.cuda.runtime.CUDARuntimeError:
        pass
    ours = build.compile_for_arch("reduce.cu", (KERNEL,), ARCH, build.CUPY_OPTIONS).cubin
    assert caught["cubin"] == ours
    assert build.compile_for_arch("reduce.cu", (KERNEL,), ARCH).cubin != ours  # -ftz=true changes the code


def test_the_cubin_reader_finds_each_kernel_and_refuses_what_is_no_cubin():
    compiled = build.compile_for_arch("reduce.cu", (KERNEL,), ARCH, build.CUPY_OPTIONS)
    cubin = Cubin(compiled.cubin)
    assert KERNEL in cubin.kernels and "seed000_v1_atomic" in cubin.kernels  # every kernel the file compiled
    assert cubin.kernel_code(KERNEL) != cubin.kernel_code("reduce1_interleaved_strided")
    assert 8 <= dict(cubin.function_attributes(KERNEL))["registers"] <= 255
    for damaged in (b"", b"not an ELF file at all" * 4, compiled.cubin[:200]):
        with pytest.raises(NotACubin):
            Cubin(damaged)
    with pytest.raises(KeyError):
        cubin.kernel_code("no_such_kernel")
