#!/usr/bin/env python3
"""Keep a demo run as the recording the package ships: `crashloop demo --replay` plays it.

    scripts/keep-demo.py runs/<id>-check-demo-*

Copies what a replay reads and nothing else: summary.json (the curves, the
verdicts, the scenarios' takeaways), the host's CPU samples, and of
attempts.jsonl the bare workers' attempts (the live view's panels; the
scenarios' pods are summarised in summary.json). Writes RECORDING.md beside
them (run id, release, date, sizes), then loads the result as the replay will,
so a recording that cannot be played is never kept.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "harness"))

from crashloop_harness.live.replay import load_recording  # noqa: E402
from crashloop_harness.pods.skeleton import crashing_pod_name  # noqa: E402
from crashloop_harness.recording.hostcpu import HOST_CPU_FILE  # noqa: E402
from crashloop_harness.recording.records import (  # noqa: E402
    ATTEMPTS_FILE,
    AttemptLog,
    read_attempts,
)

SHIPPED = ROOT / "harness" / "crashloop_harness" / "resources" / "demo"
SUMMARY_FILE = "summary.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, help="a finished demo's run directory")
    parser.add_argument("--into", type=Path, default=SHIPPED, help="where (default: the package)")
    args = parser.parse_args()
    summary = json.loads((args.run_dir / SUMMARY_FILE).read_text(encoding="utf-8"))
    if "-check-demo-" not in summary["run_id"]:
        print(f"{args.run_dir} is run {summary['run_id']}, not a demo's", file=sys.stderr)
        return 2
    if args.into.exists():
        shutil.rmtree(args.into)
    args.into.mkdir(parents=True)
    shutil.copyfile(args.run_dir / SUMMARY_FILE, args.into / SUMMARY_FILE)
    if (args.run_dir / HOST_CPU_FILE).is_file():
        shutil.copyfile(args.run_dir / HOST_CPU_FILE, args.into / HOST_CPU_FILE)
    # The latest record of each attempt of each worker's bare crashing pod (not the
    # variants beside it nor the restart-cost probes), as the replay reads them.
    with AttemptLog(args.into) as log:
        for record in read_attempts(args.run_dir / ATTEMPTS_FILE):
            if record.pod == crashing_pod_name(record.worker):
                log.append(record)
    recording = load_recording(args.into)
    size = sum(p.stat().st_size for p in args.into.iterdir())
    attempts = sum(len(group) for group in recording.attempts.values())
    (args.into / "RECORDING.md").write_text(
        f"# The shipped demo recording\n\n"
        f"Run `{summary['run_id']}`: `crashloop demo` on Kubernetes "
        f"{summary['cluster']['kubernetes_version']}, {summary['started_at']} to "
        f"{summary['finished_at']}, status `{summary['status']}`. Kept by "
        f"`scripts/keep-demo.py`: {attempts} attempts of the bare workers "
        f"({', '.join(recording.attempts)}), {recording.duration_s:.0f} s, {size // 1024} KiB "
        "before this file.\n",
        encoding="utf-8",
    )
    print(f"kept {summary['run_id']} in {args.into}: {attempts} attempts, {size // 1024} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
