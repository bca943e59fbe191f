#!/usr/bin/env bash
# Run make targets one after another, as `make test` runs its phases, and say how long
# each took:
#
#   scripts/timed-phases.sh FILE TARGET[+TARGET...]...
#
# Targets joined by "+" run at the same time (the first in front, the others' output
# shown when they all end).
# FILE (under build/, which is ignored) is started afresh; each phase's wall time and exit
# status are appended to it as the phase ends, so a run that is killed still leaves the
# phases it finished.
# At the end a table of them is printed, also when a phase failed. The phases stop at the
# first that fails, as make's prerequisites did, and this exits with that phase's status.
# The Makefile passes its own make as $MAKE (sub-makes share its flags and job server).
set -o nounset -o pipefail

if (($# < 2)); then
  echo "usage: $0 FILE TARGET..." >&2
  exit 2
fi
times="$1"
shift
make="${MAKE:-make}"

mkdir -p "$(dirname "$times")"
printf 'phase\tseconds\tstatus\n' >"$times"

now_ms() { echo $(($(date +%s%N) / 1000000)); }
# 42.3 s, or 10 min 24 s from a minute on.
shown() {
  if (($1 < 60000)); then
    printf '%d.%d s' $(($1 / 1000)) $(($1 % 1000 / 100))
  else
    printf '%d min %02d s' $(($1 / 60000)) $(($1 / 1000 % 60))
  fi
}

# One phase: its wall time and status appended to $times as it ends.
run_phase() {
  local target="$1" began took code=0
  began="$(now_ms)"
  "$make" --no-print-directory "$target" || code=$?
  took=$(($(now_ms) - began))
  printf '%s\t%d.%03d\t%d\n' "$target" $((took / 1000)) $((took % 1000)) "$code" >>"$times"
  return "$code"
}

status=0
started="$(now_ms)"
for group in "$@"; do
  # "a+b": phases that need nothing of each other run at once, the first in front
  # (its output as it comes), the others behind it with their output kept in
  # build/<phase>.log and shown when the group ends.
  IFS=+ read -r -a phases <<<"$group"
  pids=()
  for target in "${phases[@]:1}"; do
    run_phase "$target" >"build/$target.log" 2>&1 &
    pids+=("$!")
  done
  run_phase "${phases[0]}" || status=$?
  for index in "${!pids[@]}"; do
    code=0
    wait "${pids[$index]}" || code=$?
    target="${phases[$((index + 1))]}"
    echo
    echo "--- $target (ran beside ${phases[0]}; build/$target.log):"
    cat "build/$target.log"
    ((status != 0)) || status=$code
  done
  ((status == 0)) || break
done
wall=$(($(now_ms) - started))

echo
echo "wall time per phase ($times):"
while IFS=$'\t' read -r phase seconds code; do
  ms=$((10#${seconds%.*} * 1000 + 10#${seconds#*.}))
  if ((code == 0)); then outcome=passed; else outcome="failed (exit $code)"; fi
  printf '  %-8s %12s  %s\n' "$phase" "$(shown "$ms")" "$outcome"
done < <(tail -n +2 "$times")
for group in "$@"; do
  IFS=+ read -r -a phases <<<"$group"
  for target in "${phases[@]}"; do
    grep -q "^$target"$'\t' "$times" || printf '  %-8s %12s  %s\n' "$target" "" "not run"
  done
done
# Wall time, not the phases' sum: phases joined by "+" ran at once.
printf '  %-8s %12s\n' total "$(shown "$wall")"
exit "$status"
