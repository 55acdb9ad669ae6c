# primbench: `make bench` measures, `make test` checks. `make help` lists the rest.
PYTHON ?= python3
CONFIG ?= configs/default.yaml
REPEAT ?= 0
OUTPUT ?=
# The newest committed run, for `make report` (override: make report RUN=results/<run>.jsonl)
RUN ?= $(lastword $(sort $(wildcard results/*.jsonl)))

.PHONY: help bench report test gpu-test gpu-check baseline check info list compile clean

help:
	@echo "make bench [CONFIG=configs/default.yaml] [OUTPUT=dir]  run a sweep on the GPU: run file + HTML report in results/ (or OUTPUT)"
	@echo "make test                                 CI tests (no GPU): config, stats, run file, report, CLI, kernels compile"
	@echo "make report [RUN=results/<run>.jsonl]     render a recorded run (default: the newest in results/)"
	@echo "make gpu-test                             GPU tests: every variant against its reference"
	@echo "make gpu-check [CONFIG=...]               GPU tests + a bench run + do_bench cross-check, logs in \$$OUT"
	@echo "make baseline [RUN=...]                   make a clean run the baseline of its GPU: results/baselines/<gpu>.jsonl"
	@echo "make check [RUN=...]                      the CI gate: RUN against its GPU's baseline (exit 1 on a regression)"
	@echo "make info | list | compile                the GPU; the variants; compile every kernel for sm_90 and sm_80"

bench:
	@$(PYTHON) -m primbench.setup_env --gpu
	$(PYTHON) bench.py run $(CONFIG) $(if $(OUTPUT),--output $(OUTPUT))

report:
	@$(PYTHON) -m primbench.setup_env --report
	$(PYTHON) bench.py report $(RUN)

test:
	@$(PYTHON) -m primbench.setup_env --test
	$(PYTHON) -m pytest -q

gpu-test:
	@$(PYTHON) -m primbench.setup_env --gpu
	$(PYTHON) -m pytest -q -m gpu

gpu-check:
	@$(PYTHON) -m primbench.setup_env --gpu
	CONFIG=$(CONFIG) REPEAT=$(REPEAT) tools/gpu_check.sh

baseline:
	$(PYTHON) bench.py baseline $(RUN)

check:
	$(PYTHON) bench.py check $(RUN) --markdown results/check.md --junit results/check.xml

info:
	$(PYTHON) bench.py info

list:
	$(PYTHON) bench.py list

compile:
	$(PYTHON) bench.py compile --arch sm_90 sm_80

clean:
	rm -rf build .pytest_cache
