#!/usr/bin/env python3
"""Keep a fleet run as replay test data and as the docs' kept result.

    scripts/keep-fleet.py FLEET_DIR NAME --command "crashloop fleet ..." --what "..."

Keeps each group's checks as traces (scripts/keep-trace.py, one per round:
tests/data/traces/NAME-<cluster>-<group>-r<n>/), and in tests/data/fleet/NAME/
what the fleet read and planned (nodes.json, plan.json), its result
(fleet.json), rounds.json (which trace each round of each group is) and each
round's summary.json (summaries/<trace>.json). The
fleet's fleet.json and report.md go to docs/fleet/NAME.* as the kept result.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLEETS = ROOT / "tests" / "data" / "fleet"
DOCS = ROOT / "docs" / "fleet"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fleet_dir", type=Path)
    parser.add_argument("name")
    parser.add_argument("--command", required=True, help="what made the fleet run")
    parser.add_argument("--what", required=True, help="what happened in it")
    args = parser.parse_args()
    fleet = json.loads((args.fleet_dir / "fleet.json").read_text())
    target = FLEETS / args.name
    target.mkdir(parents=True, exist_ok=True)
    for name in ("nodes.json", "plan.json", "fleet.json"):
        shutil.copyfile(args.fleet_dir / name, target / name)
    rounds: dict[str, list[str]] = {}
    for group in fleet["groups"]:
        key = f"{group['cluster']}/{group['group']}"
        rounds[key] = []
        for n, checked in enumerate(group["rounds"], start=1):
            if not checked["run_dir"]:
                continue  # a check that raised before it wrote anything has no trace
            trace = f"{args.name}-{group['cluster']}-{group['group']}-r{n}"
            subprocess.run(
                [
                    sys.executable,
                    str(ROOT / "scripts" / "keep-trace.py"),
                    checked["run_dir"],
                    trace,
                    "--command",
                    args.command,
                    "--what",
                    f"Round {n} of group {key} of fleet {fleet['fleet_id']}: {args.what}",
                ],
                check=True,
            )
            rounds[key].append(trace)
            # The round's whole summary too: what the fleet judged each node from.
            summaries = target / "summaries"
            summaries.mkdir(exist_ok=True)
            shutil.copyfile(Path(checked["run_dir"]) / "summary.json", summaries / f"{trace}.json")
    (target / "rounds.json").write_text(json.dumps(rounds, indent=1) + "\n")
    DOCS.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(args.fleet_dir / "fleet.json", DOCS / f"{args.name}.json")
    shutil.copyfile(args.fleet_dir / "report.md", DOCS / f"{args.name}.md")
    print(f"kept {target} and {DOCS}/{args.name}.*")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
