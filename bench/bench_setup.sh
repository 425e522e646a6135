#!/usr/bin/env bash
# The README's two set-up commands, each in a fresh clone, timed phase by phase: clone, venv, install,
# then the command itself (`drill quiz --chip v5e --count 5` answered with `q`; the fast test set).
# Usage: bench/bench_setup.sh [REPOSITORY [BRANCH]]  (default: this checkout and its branch).
# Prints the machine (cores, load, Python), then one line per phase: "command N: phase  seconds  exit".
# The clones live in a temporary folder, removed at the end; nothing here is changed.
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
src="${1:-$here}"
branch="${2:-$(git -C "$src" rev-parse --abbrev-ref HEAD)}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "machine: $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); $(python3 --version); $(date -u +%FT%TZ)"
echo "source: $src ($branch, $(git -C "$src" rev-parse --short HEAD))"

status=0
phase() {  # phase LABEL COMMAND...: run it, print its wall time and exit status
  local label=$1 start end rc
  shift
  start=$(date +%s%N)
  "$@" > "$work/last.log" 2>&1
  rc=$?
  end=$(date +%s%N)
  printf '%-32s %8.1f s  exit %d\n' "$label" "$(( (end - start) / 1000000 ))e-3" "$rc"
  if [ "$rc" -ne 0 ]; then
    tail -n 20 "$work/last.log" | sed 's/^/    /'
    status=1
  fi
  return "$rc"
}

quiz() { printf 'q\n' | .venv/bin/drill quiz --chip v5e --count 5; }

for n in 1 2; do
  clone="$work/clone-$n"
  phase "command $n: clone" git clone -q --branch "$branch" "$src" "$clone" || continue
  cd "$clone" || exit 1
  phase "command $n: venv" python3 -m venv .venv || continue
  if [ "$n" -eq 1 ]; then
    phase "command 1: pip install -e ." .venv/bin/pip install -q -e . || continue
    phase "command 1: drill quiz (q)" quiz
  else
    phase "command 2: pip install -e .[test]" .venv/bin/pip install -q -e '.[test]' || continue
    phase "command 2: pytest (fast set)" .venv/bin/pytest
    grep -E "^[0-9]+ passed|passed|failed" "$work/last.log" | tail -n 1 | sed 's/^/    /'
    sed -n '/slowest 15 durations/,/^$/p' "$work/last.log" | sed 's/^/    /'
  fi
  cd "$here" || exit 1
done
exit "$status"
