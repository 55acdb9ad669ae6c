#!/usr/bin/env bash
# The nightly gate on the GPU (README, "Gating CI"): nightly runs of one commit on this machine,
# `check --strict` of every pair both ways, a baseline of those runs, `check --confirm` against the
# tracked baseline (another board), and `--confirm` of tests/plugins/slower_sum.py's extra pass
# standing in for a kernel change (confirmed SLOWER, exit 1). Run it on two freshly started machines (give the first back between), keep both $OUT
# folders, then check the runs of one machine against the other's. Logs and run files go to $OUT.
# Usage: PRIMBENCH_GIT_SHA=<full sha> RUNS=3 tools/gate_acceptance.sh   (from the repository root)
set -uo pipefail
OUT="${OUT:-build/gate-acceptance}"
[ -n "${PY:-}" ] || { python3 -m primbench.setup_env --venv .venv --gpu >/dev/null && PY=.venv/bin/python; }
# Absolute, but not resolved: realpath would follow the venv's python symlink to the base python,
# which has none of the venv's packages (on the H200 every step died at "import numpy").
PY="$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")"
RUNS="${RUNS:-3}"
: "${PRIMBENCH_GIT_SHA:?give the full sha of the commit measured, as the device copy of .git can be stale}"
export PRIMBENCH_GIT_SHA PYTHONUNBUFFERED=1
mkdir -p "$OUT/nightly"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"

echo "== $RUNS nightly runs"
for i in $(seq "$RUNS"); do
  "$PY" bench.py run configs/nightly.yaml --no-report --output "$OUT/nightly/$i" > "$OUT/nightly-$i.log" 2>&1
  tail -1 "$OUT/nightly-$i.log"
done
runs=$(ls "$OUT"/nightly/*/*/*.jsonl)

echo "== check --strict of every pair, both ways"
for a in $runs; do for b in $runs; do
  [ "$a" = "$b" ] && continue
  "$PY" bench.py check "$b" --baseline "$a" --strict > "$OUT/pair.log" 2>&1
  echo "exit $? $(basename "$a") -> $(basename "$b"): $(grep '^check:' "$OUT/pair.log")"
done; done

echo "== a baseline of the $RUNS runs"
"$PY" bench.py baseline $runs --folder "$OUT/baseline" 2>&1 | tail -2

echo "== check --confirm against the tracked baseline (another board)"
first=$(echo "$runs" | head -1)
"$PY" bench.py check "$first" --strict --confirm --junit "$OUT/confirm.xml" > "$OUT/confirm.log" 2>&1
echo "exit $?"; grep -E '^(machine|protocol|confirm|check)' "$OUT/confirm.log"

echo "== slower_sum's extra pass, confirmed against its own earlier commit (a throwaway clone)"
clone=$(mktemp -d)/clone
root=$(pwd)   # its bench.py runs this checkout's primbench; the clone holds only the plugin's history
git clone -q . "$clone"
(
  cd "$clone" || exit 2
  mkdir -p acceptance
  # The first commit: a copy of vector_load_sum; the second gives it slower_sum's extra pass (a
  # second launch over 1/48 of the input), a change confined to one variant.
  sed -e 's/name="test_only_slower_sum"/name="test_only_confirm_sum"/' \
      -e 's/prepare=_prepare_with_an_extra_pass,/prepare=registry.get("reduce", "vector_load_sum").prepare,/' \
      tests/plugins/slower_sum.py > acceptance/confirm_sum.py
  git add acceptance && git -c user.name=a -c user.email=a@b commit -qm "confirm_sum: vector_load_sum itself"
  base_sha=$(git rev-parse HEAD)
  PRIMBENCH_GIT_SHA=$base_sha "$PY" "$root/bench.py" run --plugin acceptance/confirm_sum.py --variant reduce/test_only_confirm_sum \
    --sizes 2^25,2^28 --no-report --output base > base.log 2>&1; tail -1 base.log
  sed -e 's/name="test_only_slower_sum"/name="test_only_confirm_sum"/' -e 's/version=1,/version=2,/' \
      tests/plugins/slower_sum.py > acceptance/confirm_sum.py
  git -c user.name=a -c user.email=a@b commit -qam "confirm_sum: an extra pass over 1/48 of the input"
  PRIMBENCH_GIT_SHA=$(git rev-parse HEAD) "$PY" "$root/bench.py" run --plugin acceptance/confirm_sum.py \
    --variant reduce/test_only_confirm_sum --sizes 2^25,2^28 --no-report --output new > new.log 2>&1; tail -1 new.log
  "$PY" "$root/bench.py" check new/*/*.jsonl --baseline base/*/*.jsonl --plugin acceptance/confirm_sum.py --confirm > confirm.log 2>&1
  echo "exit $?"; grep -E '^(SLOWER|confirm|check|  regression)' confirm.log; grep -A1 '^SLOWER' confirm.log | tail -1
) 2>&1 | tee "$OUT/slower.log"
