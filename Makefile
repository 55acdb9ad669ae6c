# primbench: `make bench` measures, `make test` checks. `make help` lists the rest.
# Every target runs in the virtual environment $(VENV), which primbench/setup_env.py makes and fills
# with the system's $(PYTHON) first (it never installs into that python; PEP 668), then installs primbench
# itself into it, editable: .venv/bin/primbench and `.venv/bin/python -m primbench` work from any folder.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
SETUP := $(PYTHON) -m primbench.setup_env --venv $(VENV)
CONFIG ?= configs/default.yaml
REPEAT ?= 0
FIXTURES ?= 0
OUTPUT ?=
# The H200's reference run (tracked; results/README.md) for `make report`; for `make check` and
# `make baseline`, the newest run under results/<gpu>/, else the reference. Override: RUN=<run file>.
REFERENCE ?= results/reference/nvidia-h200.jsonl.gz
# Run names start with their UTC start time: the newest is the last name, whatever its GPU folder.
NEWEST := $(shell ls results/*/*.jsonl 2>/dev/null | grep -v -e /baselines/ -e /reference/ | awk -F/ '{print $$NF, $$0}' | sort | tail -1 | cut -d' ' -f2)
RUN ?= $(or $(NEWEST),$(REFERENCE))

FLOORS_VENV ?= .venv-floors

.PHONY: help bench report docs test test-floors gpu-test gpu-check profile baseline reference check info list compile clean distclean

help:
	@echo "make bench [CONFIG=configs/default.yaml] [OUTPUT=dir]  run a sweep on the GPU: run file + HTML report in results/ (or OUTPUT)"
	@echo "make test                                 CI tests (no GPU): config, stats, run file, report, CLI, kernels compile"
	@echo "make test-floors                          the unit tests on the oldest dependencies pyproject.toml allows (CI runs it)"
	@echo "make report [RUN=<run file>]              render a run (default: the H200's reference run, results/reference/)"
	@echo "make docs                                 write the figures README.md and docs/ quote from the tracked runs in results/"
	@echo "make gpu-test                             GPU tests: every variant against its expected answer"
	@echo "make gpu-check [CONFIG=...]               GPU tests + a bench run + do_bench cross-check, logs in \$$OUT"
	@echo "make profile [RUN=...]                    Nsight Compute counters of RUN's progression and 2^28 cases, beside it"
	@echo "make baseline [RUN=\"a b c\"]              make clean runs (one, or several of one config) the baseline of their GPU"
	@echo "make reference [RUN=...]                  make a clean run the reference of its GPU: results/reference/<gpu>.jsonl.gz"
	@echo "make check [RUN=...] [CHECK_FLAGS=--strict] the CI gate: RUN against its GPU's baseline (exit 1 on a regression)"
	@echo "make info | list | compile                the GPU; the variants; compile every kernel for sm_90 and sm_80"
	@echo "make clean | distclean                    remove build/ and .pytest_cache; distclean also the venv $(VENV)"
	@echo "Targets run in the venv $(VENV) (VENV=dir), made by primbench/setup_env.py with $(PYTHON) (PYTHON=python3.12)."
	@echo "make exits 2 whenever a command fails; the CLI's own code shows in make's 'Error N' line (1 failed cases,"
	@echo "2 bad input, 3 no GPU). Scripts that need that exact code call $(PY) bench.py ... (or the installed primbench) directly."

bench:
	@$(SETUP) --gpu
	$(PY) bench.py run $(CONFIG) $(if $(OUTPUT),--output $(OUTPUT))

report:
	@$(SETUP) --report
	$(PY) bench.py report $(if $(filter command line environment,$(origin RUN)),$(RUN),$(REFERENCE))

# The figures the docs quote from the reference run and the baseline, written from them (tools/doc_figures;
# make test fails where one is stale). After `make reference` or `make baseline`, then commit the docs.
docs:
	@$(SETUP) --report
	$(PY) -m tools.doc_figures --write

test:
	@$(SETUP) --test
	$(PY) -m pytest -q -n 2 --dist worksteal

# The unit tests in a venv of exactly pyproject.toml's floors (no CuPy: kernel compiling stays with make test).
test-floors:
	@$(PYTHON) -m primbench.setup_env --floors --venv $(FLOORS_VENV)
	$(FLOORS_VENV)/bin/python -m pytest -q -n 2 --dist worksteal -p no:cacheprovider tests/unit \
		--ignore=tests/unit/test_kernels_compile.py --ignore=tests/unit/test_histogram_lanes.py \
		--ignore=tests/unit/test_machine_code.py

# Correctness tests (652, about 1.8 s each alone) share the GPU between GPU_TEST_WORKERS processes;
# the tests that time something or hold a time limit then run alone.
GPU_TEST_WORKERS ?= 8
gpu-test:
	@$(SETUP) --gpu
	$(PY) -m pytest -q -m "gpu and not timed" -n $(GPU_TEST_WORKERS) --dist worksteal
	$(PY) -m pytest -q -m "gpu and timed"

gpu-check:
	@$(SETUP) --gpu
	PY=$(PY) CONFIG=$(CONFIG) REPEAT=$(REPEAT) FIXTURES=$(FIXTURES) tools/gpu_check.sh

baseline:
	@$(SETUP) --report
	$(PY) bench.py baseline $(RUN)

reference:
	@$(SETUP) --report
	$(PY) bench.py baseline $(RUN) --folder results/reference

check:
	@$(SETUP) --report
	$(PY) bench.py check $(RUN) --markdown results/check.md --junit results/check.xml $(CHECK_FLAGS)

# The cases the report explains: the reduce progression at 2^25 and each op's cases at 2^28.
PROFILE_SIZES ?= 2^25,2^28
profile:
	@$(SETUP) --gpu
	$(PY) bench.py profile $(RUN) --sizes $(PROFILE_SIZES) --blocks 256

info:
	@$(SETUP) --gpu
	$(PY) bench.py info

list:
	@$(SETUP) --report
	$(PY) bench.py list

compile:
	@$(SETUP) --compile
	$(PY) bench.py compile --arch sm_90 sm_80

clean:
	rm -rf build .pytest_cache

distclean: clean
	rm -rf $(VENV) $(FLOORS_VENV)
