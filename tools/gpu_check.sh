#!/usr/bin/env bash
# One device call does it all: GPU tests, a bench run, the do_bench cross-check. Logs and the run
# file land in $OUT (the device tool brings that folder back) or build/gpu-check.
# Usage: make gpu-check [CONFIG=configs/default.yaml]
set -uo pipefail
OUT="${OUT:-build/gpu-check}"
CONFIG="${CONFIG:-configs/default.yaml}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
status=0
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$OUT/nvidia-smi.csv" 2>&1
echo "== GPU tests"
python3 -m pytest -m gpu -q -p no:cacheprovider tests 2>&1 | tee "$OUT/gpu-tests.log" | tail -15 || status=1
echo "== bench: $CONFIG"
start=$(date +%s)
python3 bench.py run "$CONFIG" --output "$OUT" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.log" | tail -25 || status=1
echo "bench wall time: $(( $(date +%s) - start )) s" | tee -a "$OUT/bench.log"
run_file=$(ls -t "$OUT"/*.jsonl 2>/dev/null | head -1)
if [ -n "$run_file" ] && python3 -c "import triton, torch" 2>/dev/null; then
  echo "== do_bench cross-check"
  python3 tools/crosscheck_do_bench.py "$run_file" --json "$OUT/crosscheck.json" 2>&1 | tee "$OUT/crosscheck.log"
fi
exit $status
