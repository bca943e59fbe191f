#!/usr/bin/env bash
# Run make targets one after another, as `make test` runs its phases, and say how long
# each took:
#
#   scripts/timed-phases.sh FILE TARGET...
#
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

status=0
for target in "$@"; do
  began="$(now_ms)"
  "$make" --no-print-directory "$target" || status=$?
  took=$(($(now_ms) - began))
  printf '%s\t%d.%03d\t%d\n' "$target" $((took / 1000)) $((took % 1000)) "$status" >>"$times"
  ((status == 0)) || break
done

total=0
echo
echo "wall time per phase ($times):"
while IFS=$'\t' read -r phase seconds code; do
  ms=$((10#${seconds%.*} * 1000 + 10#${seconds#*.}))
  total=$((total + ms))
  if ((code == 0)); then outcome=passed; else outcome="failed (exit $code)"; fi
  printf '  %-8s %12s  %s\n' "$phase" "$(shown "$ms")" "$outcome"
done < <(tail -n +2 "$times")
for target in "$@"; do
  grep -q "^$target"$'\t' "$times" || printf '  %-8s %12s  %s\n' "$target" "" "not run"
done
printf '  %-8s %12s\n' total "$(shown "$total")"
exit "$status"
