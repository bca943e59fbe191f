#!/usr/bin/env bash
# Fault drill: the Docker engine stops in the middle of a quick check.
#
# What must happen: the check ends on its own, as an error that names the
# silent nodes, within about NODE_SILENT (60 s) of the stop, keeping its
# summary and every attempt recorded; then `crashloop up` starts the engine
# again and repairs or recreates the cluster. Prints the numbers to report.
set -euo pipefail
cd "$(dirname "$0")/.."
crashloop=.venv/bin/crashloop
log=$(mktemp)
check=""

restore() {
  # Whatever happened, leave no check running (`crashloop up` restores the cluster).
  if [[ -n "$check" ]] && kill -0 "$check" 2>/dev/null; then
    kill -INT "$check" || true
    wait "$check" || true
  fi
  rm -f "$log"
}
trap restore EXIT

"$crashloop" up >/dev/null
# Wide lines: the run directory must not be wrapped in the log.
COLUMNS=1000 "$crashloop" check --profile quick >"$log" 2>&1 &
check=$!

# Stop the engine once the fast worker has restarted a few times.
until grep -Eq 'fast ([3-9]|[1-9][0-9])' "$log"; do
  if ! kill -0 "$check" 2>/dev/null; then
    echo "drill: the check ended before the engine could be stopped:" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
  sleep 1
done
stopped_at=$(date +%s)
"$crashloop" engine --stop
set +e
wait "$check"
code=$?
set -e
check=""
ended_at=$(date +%s)

run_dir=$(grep -o 'records in [^ ]*' "$log" | head -n 1 | cut -d' ' -f3)
echo "drill: check exit code $code, $((ended_at - stopped_at)) s after the engine was stopped"
echo "drill: run directory $run_dir"
.venv/bin/python - "$run_dir" <<'PY'
import json
import sys
from pathlib import Path

run_dir = Path(sys.argv[1])
summary = json.loads((run_dir / "summary.json").read_text())
attempts = (run_dir / "attempts.jsonl").read_text().splitlines()
print(f"drill: status {summary['status']}; {len(attempts)} attempt records kept")
print(f"drill: reason: {summary['reason']}")
PY

started=$(date +%s)
"$crashloop" up >/dev/null
echo "drill: \`crashloop up\` brought the cluster back in $(($(date +%s) - started)) s"
