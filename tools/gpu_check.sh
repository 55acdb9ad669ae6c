#!/usr/bin/env bash
# One device call does it all: `make bench` end to end (the run to keep as the reference), the
# fixture runs the CI tests read (FIXTURES=1), optionally the same config again (REPEAT=1) with the
# reproducibility check, primbench.measure against the CLI, the do_bench cross-check, and the GPU
# tests last. Logs and run files land in $OUT (the device tool brings that folder back: at most 8
# files, so the report is rendered here from the run file) or build/gpu-check.
# Usage: make gpu-check [CONFIG=configs/default.yaml] [REPEAT=1] [FIXTURES=1]
set -uo pipefail
OUT="${OUT:-build/gpu-check}"
CONFIG="${CONFIG:-configs/default.yaml}"
# The project's venv python, as make passes it (PY=$(PY)); run by hand, the default venv's.
PY="${PY:-.venv/bin/python}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
status=0

echo "== make bench CONFIG=$CONFIG"
{
  nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv
  start=$(date +%s)
  make --no-print-directory bench CONFIG="$CONFIG" || echo "make bench exited $?"
  echo "bench wall time: $(( $(date +%s) - start )) s"
} > "$OUT/bench.log" 2>&1
tail -4 "$OUT/bench.log"
run_file=$(ls -t results/*/*.jsonl 2>/dev/null | grep -v -e /baselines/ -e /reference/ | head -1)
[ -n "$run_file" ] && cp "$run_file" "$OUT/"

if [ "${FIXTURES:-0}" = 1 ]; then
  echo "== fixture runs for the CI tests (tests/data/README.md)"
  mkdir -p "$OUT/fixtures" build
  for name in fixture-a fixture-b; do
    "$PY" bench.py run tests/data/fixture.yaml --no-report --output "build/$name" > "build/$name.log" 2>&1 || status=1
    tail -1 "build/$name.log"
    cp "$(ls build/$name/*/*.jsonl | head -1)" "$OUT/fixtures/$name.jsonl"
  done
  "$PY" bench.py run configs/progression.yaml --no-report --output build/progression > build/progression.log 2>&1 || status=1
  tail -1 build/progression.log
  cp "$(ls build/progression/*/*.jsonl | head -1)" "$OUT/fixtures/progression.jsonl"
fi

if [ "${REPEAT:-0}" = 1 ] && [ -n "$run_file" ]; then
  echo "== the same config again, for reproducibility"
  mkdir -p "$OUT/repeat"
  {
    "$PY" bench.py run "$CONFIG" --output "$OUT/repeat" --no-report
    "$PY" bench.py check --baseline "$run_file" "$OUT/repeat"
  } > "$OUT/repeat.log" 2>&1
  tail -3 "$OUT/repeat.log"
fi

echo "== primbench.measure against the CLI (CUB's sum at 2^28, one process)"
"$PY" -m tools.probe.check_measure > "$OUT/measure.log" 2>&1 || status=1
tail -4 "$OUT/measure.log"

if [ -n "$run_file" ] && "$PY" -c "import triton, torch" 2>/dev/null; then
  echo "== do_bench cross-check"
  "$PY" -m tools.probe.crosscheck_do_bench "$run_file" --json "$OUT/crosscheck.json" 2>&1 | tail -8
fi

echo "== GPU tests"
{ # as make gpu-test: correctness tests shared between processes, then the timed ones alone
  "$PY" -m pytest -m "gpu and not timed" -n "${GPU_TEST_WORKERS:-8}" --dist worksteal -q -p no:cacheprovider tests || status=1
  "$PY" -m pytest -m "gpu and timed" -q -p no:cacheprovider tests || status=1
} > "$OUT/gpu-tests.log" 2>&1
tail -3 "$OUT/gpu-tests.log"
exit $status
