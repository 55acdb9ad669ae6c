#!/bin/sh
# The A/B interval on the GPU: 40 A/A pairs (4 variants x 5 sizes x 2 calls) and the sensitivity of
# vector_load_sum against a copy with an extra pass over 3 % and 1 % of its bytes. Each call's lines
# and raw samples go to $OUT/ab/ (JSON: every round's A, B and A/A slice sample). Run from the repository root.
set -u
OUT=${OUT:-/tmp/ab-acceptance}
PY=${PY:-.venv/bin/python}
mkdir -p "$OUT/ab"
SIZES=2^18,2^20,2^22,2^25,2^28
for call in 1 2; do
  for v in reduce/vector_load_sum reduce/cub_device_reduce scan/round_sums_async_copy histogram/lane_columns; do
    name=$(echo "$v" | tr / _)
    $PY bench.py ab "$v" "$v" --sizes "$SIZES" --json "$OUT/ab/aa-$name-$call.json" > "$OUT/ab/aa-$name-$call.txt" 2>&1
    grep "B/A" "$OUT/ab/aa-$name-$call.txt" | sed "s|^|$v call $call: |"
  done
done
for pct in 3 1; do
  fraction=$((100 / pct))
  [ "$pct" = 3 ] && fraction=33
  plugin="$OUT/ab/slower_$pct.py"
  sed "s/^EXTRA_FRACTION = 48$/EXTRA_FRACTION = $fraction/" tests/plugins/slower_sum.py > "$plugin"
  $PY bench.py ab --plugin "$plugin" reduce/vector_load_sum reduce/test_only_slower_sum --sizes 2^25,2^28 \
    --json "$OUT/ab/slower-$pct.json" > "$OUT/ab/slower-$pct.txt" 2>&1
  grep "B/A" "$OUT/ab/slower-$pct.txt" | sed "s|^|extra pass over 1/$fraction: |"
done
