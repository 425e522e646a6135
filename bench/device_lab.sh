#!/usr/bin/env bash
# LAB·0.1 on a real accelerator, in one prepared call: `drill lab --calibrate` at each size,
# non-interactive, from the source tree (no install), then `drill gate`.
#
#   OUT=/some/dir bash bench/device_lab.sh            # sizes 4096 8192 (the issue's)
#   OUT=/tmp/x REPS=3 bash bench/device_lab.sh 128 256  # a quick check on a CPU
#
# Needs python3 with jax (CUDA or TPU build), click, pyyaml, numpy, matplotlib. Nothing is installed.
# Leaves at most 8 files under $OUT, none deeper than $OUT/bench/<file>:
#   bench/lab-0.1-*.json   one record per size (copy them into the repository's bench/)
#   bench/ledger.jsonl     the records folder's ledger (the gate counts a record only where it vouches)
#   roofline-n<N>.png      one plot per size
#   traces.tar.gz          every profiler trace; extract inside bench/ (-> bench/traces/<record>/<op>/)
#   trace-summary.json     planes/lines/stat keys of one trace (to debug device-time parsing)
#   log.txt                everything printed here
# Your own predictions (written before the run) are read from $PREDICTIONS_PREFIX<N>.yaml when
# that file exists (default bench/predictions/h200-n<N>.yaml), so the record scores them too.
# Each size runs under a time limit (LAB_TIMEOUT_S, default 120 s); the script keeps going if one fails.
set -uo pipefail
cd "$(dirname "$0")/.."

: "${OUT:?set OUT to the folder for the results}"
PY=${PYTHON:-python3}
REPS=${REPS:-20}
LAB_TIMEOUT_S=${LAB_TIMEOUT_S:-120}
PREDICTIONS_PREFIX=${PREDICTIONS_PREFIX:-bench/predictions/h200-n}
SIZES=("$@")
[ ${#SIZES[@]} -eq 0 ] && SIZES=(4096 8192)

mkdir -p "$OUT/bench"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
LOG="$OUT/log.txt"
: > "$LOG"
say() { echo "$@" | tee -a "$LOG"; }

say "== device_lab.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) sizes: ${SIZES[*]} reps: $REPS"
command -v nvidia-smi >/dev/null && nvidia-smi -L 2>&1 | tee -a "$LOG"
"$PY" -c 'import sys, jax; print("python", sys.version.split()[0], "jax", jax.__version__, jax.devices())' 2>&1 | tee -a "$LOG"

status=0
for n in "${SIZES[@]}"; do
  say ""
  say "== drill lab --size $n --reps $REPS --calibrate"
  start=$(date +%s)
  extra=()
  [ -f "$PREDICTIONS_PREFIX$n.yaml" ] && extra=(--predictions "$PREDICTIONS_PREFIX$n.yaml")
  timeout "$LAB_TIMEOUT_S" "$PY" -m drills.cli lab --size "$n" --reps "$REPS" --calibrate \
      --out "$OUT/bench" --plot "$OUT/roofline-n$n.png" "${extra[@]}" </dev/null 2>&1 | tee -a "$LOG"
  rc=${PIPESTATUS[0]}
  say "== size $n: exit $rc after $(( $(date +%s) - start )) s"
  [ "$rc" -ne 0 ] && status=$rc
done

# One trace's layout, so a platform whose device time did not parse can be fixed from here.
first_trace=$(ls -d "$OUT"/bench/traces/*/matmul/trace-1 2>/dev/null | head -n 1)
if [ -n "$first_trace" ]; then
  "$PY" -c 'import json, sys; from pathlib import Path; from labs.measure import profile
print(json.dumps(profile.describe(Path(sys.argv[1])), indent=1))' "$first_trace" > "$OUT/trace-summary.json" 2>>"$LOG"
fi

# Traces travel as one archive, relative to bench/ (the repository ignores bench/traces/).
if [ -d "$OUT/bench/traces" ]; then
  tar -C "$OUT/bench" -czf "$OUT/traces.tar.gz" traces && rm -rf "$OUT/bench/traces"
  size=$(stat -c %s "$OUT/traces.tar.gz")
  if [ "$size" -gt $((15 * 1024 * 1024)) ]; then
    say "traces.tar.gz is $size bytes, over the 16 MiB a file may bring back: keeping only the .xplane.pb files"
    tmp=$(mktemp -d); tar -C "$tmp" -xzf "$OUT/traces.tar.gz"
    find "$tmp" -name '*.trace.json.gz' -delete
    tar -C "$tmp" -czf "$OUT/traces.tar.gz" traces; rm -rf "$tmp"
  fi
fi

# The folder's lock file is empty and only serialises writers: it does not travel.
rm -f "$OUT/bench/.lock"

say ""
say "== drill gate"
"$PY" -m drills.cli gate --bench "$OUT/bench" 2>&1 | tee -a "$LOG"
"$PY" -m drills.cli gate --bench "$OUT/bench" --json >> "$LOG" 2>&1

say ""
say "== files under \$OUT"
(cd "$OUT" && find . -type f -printf '%p %s bytes\n' | sort) | tee -a "$LOG"
exit "$status"
