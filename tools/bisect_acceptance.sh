#!/usr/bin/env bash
# `primbench bisect` on the GPU (README, "Finding the commit that made a kernel slower"), in a
# throwaway clone: (1) five commits of a copy of vector_load_sum where the third gives it
# tests/plugins/slower_sum.py's extra pass (a second launch over 1/48 of the input, about 3 % at
# 2^28): bisect must name the third commit in at most three steps; (2) five commits where the
# kernel never changes: bisect must say "not reproduced". Both check that the clone's working tree
# is untouched (git status, HEAD, worktrees). Logs and --json files go to $OUT; the last lines say
# PASS or FAIL for each.
# Usage: tools/bisect_acceptance.sh   (from the repository root; SIZE=2^28 by default)
set -uo pipefail
OUT="${OUT:-build/bisect-acceptance}"
[ -n "${PY:-}" ] || { python3 -m primbench.setup_env --venv .venv --gpu >/dev/null && PY=.venv/bin/python; }
# Absolute, but not resolved: realpath would follow the venv's python symlink to the base python,
# which has none of the venv's packages (on the H200 every step died at "import numpy").
PY="$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")"
SIZE="${SIZE:-2^28}"
export PYTHONUNBUFFERED=1
mkdir -p "$OUT"
OUT="$(realpath "$OUT")"
rm -f "$OUT/result.txt"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
root=$(pwd)   # its bench.py runs this checkout's primbench; the clone holds only the plugin's history
clone=$(mktemp -d)/clone
git clone -q . "$clone"
cd "$clone" || exit 2
commit() { git add acceptance && git -c user.name=a -c user.email=a@b commit -qm "$1"; }
plain_sum() {  # slower_sum.py renamed, with vector_load_sum's own plan: no extra pass
  sed -e 's/name="test_only_slower_sum"/name="test_only_bisect_sum"/' \
      -e 's/prepare=_prepare_with_an_extra_pass,/prepare=registry.get("reduce", "vector_load_sum").prepare,/' \
      "$root/tests/plugins/slower_sum.py"
}
slower_sum() {  # the same, with the extra pass (and the version a changed plan takes)
  sed -e 's/name="test_only_slower_sum"/name="test_only_bisect_sum"/' -e 's/version=1,/version=2,/' \
      "$root/tests/plugins/slower_sum.py"
}
state() { git status --porcelain; git rev-parse HEAD; git worktree list; }
outcome() { grep -E '^(first SLOWER|not reproduced|not settled|spread|stopped|primbench:)' "$OUT/$1.log" | tail -1; }
run_bisect() {  # NAME: bisect the branch's first commit against its last, log and JSON under $OUT
  local first last
  first=$(git log --reverse --format=%H "$base..HEAD" | head -1); last=$(git rev-parse HEAD)
  state > "$OUT/$1-before.txt"
  "$PY" "$root/bench.py" bisect "$first" "$last" reduce/test_only_bisect_sum --sizes "$SIZE" \
    --plugin acceptance/bisect_sum.py --json "$OUT/$1.json" > "$OUT/$1.log" 2>&1
  echo "exit $?"; cat "$OUT/$1.log"
  state > "$OUT/$1-after.txt"
  if cmp -s "$OUT/$1-before.txt" "$OUT/$1-after.txt"; then echo "PASS $1: the working tree untouched"
  else echo "FAIL $1: the working tree changed (diff $1-before.txt $1-after.txt)"; fi >> "$OUT/result.txt"
}
base=$(git rev-parse HEAD)
mkdir -p acceptance

echo "== five commits, the third adds the extra pass"
git checkout -qb bisect-slower "$base"
plain_sum > acceptance/bisect_sum.py; commit "bisect_sum: vector_load_sum itself"
echo "# a comment" >> acceptance/bisect_sum.py; commit "bisect_sum: a comment"
slower_sum > acceptance/bisect_sum.py; commit "bisect_sum: an extra pass over 1/48 of the input"
third=$(git rev-parse HEAD)
echo "# a comment" >> acceptance/bisect_sum.py; commit "bisect_sum: a comment after the pass"
echo "# another" >> acceptance/bisect_sum.py; commit "bisect_sum: another comment"
run_bisect slower 2>&1 | tee "$OUT/slower.txt"
steps=$(grep -c '^step ' "$OUT/slower.log")
if grep -q "^first SLOWER commit: ${third:0:12} " "$OUT/slower.log" && [ "$steps" -le 3 ]; then
  echo "PASS slower: the third commit (${third:0:12}) in $steps step(s)"
else
  echo "FAIL slower: wanted ${third:0:12} in at most 3 steps; $steps step(s), $(outcome slower)"
fi | tee -a "$OUT/result.txt"

echo "== five commits, the kernel never changes"
git checkout -qb bisect-same "$base"
rm -rf acceptance && mkdir -p acceptance
plain_sum > acceptance/bisect_sum.py; commit "bisect_sum: vector_load_sum itself"
for i in 2 3 4 5; do echo "# comment $i" >> acceptance/bisect_sum.py; commit "bisect_sum: comment $i"; done
run_bisect same 2>&1 | tee "$OUT/same.txt"
if grep -q '^not reproduced: ' "$OUT/same.log"; then echo "PASS same: not reproduced"
else echo "FAIL same: $(outcome same)"; fi | tee -a "$OUT/result.txt"
echo "== results"; cat "$OUT/result.txt"
