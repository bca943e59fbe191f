#!/usr/bin/env python3
"""Keep a run's trace as replay test data: tests/data/traces/<name>/ with its README.

    scripts/keep-trace.py RUN_DIR NAME --command "crashloop check --profile quick" \
        --what "a clean quick check"

Copies trace.jsonl.gz from the run directory, keeps from its summary.json what
a replay is compared with (live.json: per worker its verdict, attempts, levels
seen and measured delays), and writes a README.md that says what the trace is:
the command, the release, the date, the run id, what happened and how it ended.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "harness"))

from crashloop_harness.recording.trace import TRACE_FILE, read_trace  # noqa: E402

TRACES = ROOT / "tests" / "data" / "traces"
# What a replay compares with its live run, per worker.
LIVE_KEYS = ("worker", "node", "passed", "attempts_recorded", "reported_seen", "measured_s")
METRIC_KEYS = ("scenario", "worker", "name", "measured", "passed")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("name")
    parser.add_argument("--command", required=True, help="what made the run")
    parser.add_argument("--what", required=True, help="what happened in it")
    args = parser.parse_args()
    source = args.run_dir / TRACE_FILE
    if not source.exists():
        parser.error(f"{source} does not exist: is {args.run_dir} a run directory?")
    entries = list(read_trace(source))
    context = next((e.fields for e in entries if e.kind == "context"), None)
    outcome = next((e.fields for e in entries if e.kind == "outcome"), None)
    if context is None or outcome is None:
        parser.error(f"{source} has no context or outcome: a run that did not finish")
    summary = json.loads((args.run_dir / "summary.json").read_text())
    version = summary.get("cluster", {}).get("kubernetes_version", "unknown")
    target = TRACES / args.name
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target / TRACE_FILE)
    live = {
        "run_id": summary.get("run_id"),
        "status": summary.get("status"),
        "workers": [{key: worker.get(key) for key in LIVE_KEYS} for worker in summary["workers"]],
        # A scenario run's metrics, each as the run measured and judged it.
        "metrics": [
            {key: metric.get(key) for key in METRIC_KEYS} for metric in summary.get("metrics", [])
        ],
    }
    (target / "live.json").write_text(json.dumps(live, indent=1) + "\n")
    started = datetime.fromtimestamp(entries[0].wall_ns / 1e9, UTC)
    kinds: dict[str, int] = {}
    for entry in entries:
        kinds[entry.kind] = kinds.get(entry.kind, 0) + 1
    (target / "README.md").write_text(
        f"# {args.name}\n\n"
        f"{args.what}\n\n"
        f"- command: `{args.command}`\n"
        f"- Kubernetes: {version}; observer `{context['observer']}`; "
        f"profile `{context.get('profile') or ', '.join(context.get('scenarios', []))}`\n"
        f"- recorded: {started:%Y-%m-%d %H:%M} UTC, run `{context['run_id']}`\n"
        f"- outcome: `{outcome['status']}`"
        + (f": {outcome['reason']}" if outcome["reason"] else "")
        + "\n"
        f"- entries: {', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}; "
        f"{(target / TRACE_FILE).stat().st_size // 1024} KB compressed\n"
    )
    print(f"kept {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
