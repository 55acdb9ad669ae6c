#!/usr/bin/env bash
# The GPU half of issue 52 (README "Gating CI", docs/reliability.md "The third hostile corpus"): a
# kernel that never returns, SIGKILL mid-run then --resume, two resumes at once, and a --output on a
# small tmpfs that fills mid-run. Logs go to $OUT. Run from the repository root, as root (the tmpfs).
# Usage: PRIMBENCH_GIT_SHA=<full sha> [CONFIG=configs/nightly.yaml KILL_AT=20] tools/hostile_acceptance.sh
# (a smaller CONFIG, e.g. configs/progression.yaml with KILL_AT=8, shows the same in a third of the time)
set -uo pipefail
OUT="${OUT:-build/hostile-acceptance}"
[ -n "${PY:-}" ] || { python3 -m primbench.setup_env --venv .venv --gpu >/dev/null && PY=.venv/bin/python; }
export PYTHONUNBUFFERED=1
mkdir -p "$OUT"
config="${CONFIG:-configs/nightly.yaml}"
kill_at="${KILL_AT:-20}"  # cases on disk before the SIGKILL

once_each() {  # every case key of the run file once, and an end record
  "$PY" - "$1" <<'EOF'
import sys
from primbench.runfile.io import load_run
run = load_run(sys.argv[1])
keys = [c.key for c in run.cases]
print(f"{len(keys)} cases, {len(set(keys))} keys, finished={run.finished}, failed={sum(not c.ok for c in run.cases)}")
EOF
}

wait_cases() {  # until the newest run file under $1 holds $2 case lines
  for _ in $(seq 600); do
    f=$(ls "$1"/*/*.jsonl 2>/dev/null | head -1)
    [ -n "$f" ] && [ "$(grep -c '"kind":"case"' "$f")" -ge "$2" ] && { echo "$f"; return; }
    sleep 0.1
  done
}

echo "== a kernel that never returns (tests/gpu/test_faults.py)"
"$PY" -m pytest -m gpu -q -p no:cacheprovider tests/gpu/test_faults.py -k never_returns -s > "$OUT/spin.log" 2>&1
tail -3 "$OUT/spin.log"

echo "== SIGKILL mid-run, then --resume"
"$PY" bench.py run "$config" --output "$OUT/kill" --no-report > "$OUT/kill.log" 2>&1 &
file=$(wait_cases "$OUT/kill" "$kill_at"); kill -9 $!; wait $! 2>/dev/null
echo "killed with $(grep -c '"kind":"case"' "$file") cases on disk"
"$PY" bench.py run --resume "$file" --no-report > "$OUT/kill-resume.log" 2>&1; echo "resume exit $?"
once_each "$file"

echo "== two resumes at once"
"$PY" bench.py run "$config" --output "$OUT/two" --no-report > "$OUT/two.log" 2>&1 &
file=$(wait_cases "$OUT/two" "$kill_at"); kill -9 $!; wait $! 2>/dev/null
"$PY" bench.py run --resume "$file" --no-report > "$OUT/two-first.log" 2>&1 &
first=$!
# The second starts once the first is writing (one more case on disk), so that they overlap.
before=$(grep -c '"kind":"case"' "$file")
wait_cases "$(dirname "$(dirname "$file")")" $((before + 1)) > /dev/null
echo "second resume starts with $(grep -c '"kind":"case"' "$file") cases on disk, the first still running: $(kill -0 $first 2>/dev/null && echo yes || echo no)"
"$PY" bench.py run --resume "$file" --no-report > "$OUT/two-second.log" 2>&1; echo "second resume exit $?"
cat "$OUT/two-second.log"
wait $first; echo "first resume exit $?"
once_each "$file"

echo "== a tmpfs --output that fills mid-run"
small=$(mktemp -d)
mount -t tmpfs -o size=64m tmpfs "$small" || { echo "cannot mount a tmpfs here"; exit 0; }
"$PY" bench.py run "$config" --output "$small" --no-report > "$OUT/full.log" 2>&1 &
runner=$!
file=$(wait_cases "$small" "$kill_at")
# The header alone can be 300 KB, so no fixed size fills mid-run: fill what is left once cases are on disk.
dd if=/dev/zero of="$small/filler" bs=64k 2>/dev/null
echo "disk filled with $(grep -c '"kind":"case"' "$file") cases on disk"
wait $runner; echo "run exit $?"
tail -2 "$OUT/full.log"
rm "$small/filler"
"$PY" bench.py run --resume "$file" --no-report > "$OUT/full-resume.log" 2>&1; echo "resume exit $?"
once_each "$file"
cp "$file" "$OUT/"
umount "$small"
