"""Attempt records and the append-only attempts.jsonl (crashloop_harness.recording.records)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from crashloop_harness.core.version import harness_version
from crashloop_harness.recording.cri import parse_inspect, parse_ps
from crashloop_harness.recording.records import (
    ATTEMPTS_FILE,
    AttemptLog,
    AttemptLogError,
    AttemptRecord,
    read_attempts,
)

DATA = Path(__file__).parents[1] / "data"
T0 = 1_767_261_600 * 1_000_000_000


def record(attempt: int = 0, **changes: object) -> AttemptRecord:
    base = AttemptRecord(
        run_id="20260101T100000Z-conformance",
        worker="fast",
        node="crashloop-worker",
        namespace="crashloop-e2e",
        pod="crashloop-fast",
        pod_uid="7c1f1e2a-4b7d-4a53-9a55-2f0d7e3c9b10",
        container="app",
        attempt=attempt,
        container_id=f"c{attempt:063d}",
        started_at_ns=T0 + attempt * 2_000_000_001,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_json_round_trip_keeps_every_field() -> None:
    original = record(
        3,
        finished_at_ns=T0 + 123_456_789_123,
        exit_code=1,
        reason="Error",
        reported_backoff_s=2.0,
        api_started_at="2026-01-01T10:00:06Z",
        api_finished_at="2026-01-01T10:02:03Z",
    )
    line = original.to_json()
    assert "\n" not in line
    assert AttemptRecord.from_json(line) == original


def test_nanoseconds_survive_json() -> None:
    # Beyond 2**53: a float anywhere on the way would lose the last digits.
    original = record(1, started_at_ns=1_767_261_606_587_300_001)
    assert json.loads(original.to_json())["started_at_ns"] == 1_767_261_606_587_300_001
    assert AttemptRecord.from_json(original.to_json()).started_at_ns == 1_767_261_606_587_300_001


def test_source_defaults_to_cri() -> None:
    assert record().source == "cri"
    assert json.loads(record().to_json())["source"] == "cri"


def test_integer_reported_backoff_reads_as_float() -> None:
    line = (
        record(2, reported_backoff_s=None)
        .to_json()
        .replace('"reported_backoff_s":null', '"reported_backoff_s":10')
    )
    parsed = AttemptRecord.from_json(line)
    assert parsed.reported_backoff_s == 10.0
    assert isinstance(parsed.reported_backoff_s, float)


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda d: d.pop("pod_uid"), "missing"),
        (lambda d: d.update(extra=1), "unknown"),
        (lambda d: d.update(attempt="3"), "attempt"),
        (lambda d: d.update(attempt=True), "attempt"),
        (lambda d: d.update(started_at_ns=1.5e18), "started_at_ns"),
        (lambda d: d.update(finished_at_ns="soon"), "finished_at_ns"),
    ],
)
def test_from_json_checks_fields(mutate: Callable[[dict[str, Any]], object], match: str) -> None:
    doc = json.loads(record().to_json())
    mutate(doc)
    with pytest.raises(AttemptLogError, match=match):
        AttemptRecord.from_json(json.dumps(doc))


def test_from_json_rejects_non_objects() -> None:
    with pytest.raises(AttemptLogError):
        AttemptRecord.from_json("[1, 2]")
    with pytest.raises(AttemptLogError):
        AttemptRecord.from_json('{"run_id": ')


def test_from_cri_inspect() -> None:
    container = parse_inspect((DATA / "crictl_inspect_exited.json").read_text())
    made = AttemptRecord.from_cri(
        container, run_id="r1", worker="fast", node="crashloop-worker", reported_backoff_s=2.0
    )
    assert made.key == ("7c1f1e2a-4b7d-4a53-9a55-2f0d7e3c9b10", "app", 3)
    assert (made.pod, made.namespace, made.container_id) == (
        "crashloop-fast",
        "crashloop-e2e",
        container.id,
    )
    assert made.started_at_ns == T0 + 6_587_300_000
    assert made.finished_at_ns == T0 + 6_634_170_000
    assert (made.exit_code, made.reason, made.reported_backoff_s) == (1, "Error", 2.0)


def test_from_cri_needs_a_start_time() -> None:
    listed = parse_ps((DATA / "crictl_ps_a.json").read_text())[0]
    with pytest.raises(ValueError, match="no start time"):
        AttemptRecord.from_cri(listed, run_id="r1", worker="fast", node="n")


def test_merge_keeps_what_the_older_observation_knew() -> None:
    older = record(2, reported_backoff_s=2.0)
    newer = record(2, finished_at_ns=T0 + 9, exit_code=1, reason="Error")
    merged = older.merged_with(newer)
    assert merged.reported_backoff_s == 2.0
    assert (merged.finished_at_ns, merged.exit_code, merged.reason) == (T0 + 9, 1, "Error")


def test_merge_keeps_the_first_sight_whoever_sees_the_attempt_again() -> None:
    first = record(2, seen_at_ns=T0 + 5)
    assert first.merged_with(record(2, seen_at_ns=T0 + 900)).seen_at_ns == T0 + 5
    assert record(2).merged_with(record(2, seen_at_ns=T0 + 900)).seen_at_ns == T0 + 900


def test_another_container_under_the_same_number_replaces_the_old_one() -> None:
    # After RestartAllContainers a 1.35 kubelet numbers the pod's containers from 0 again.
    old = record(0, finished_at_ns=T0 + 9, exit_code=1, reported_backoff_s=10.0)
    rerun = record(0, container_id="d" * 64, started_at_ns=T0 + 90)
    merged = old.merged_with(rerun)
    assert merged == rerun
    assert merged.finished_at_ns is None


def test_merge_refuses_another_attempt() -> None:
    with pytest.raises(ValueError, match="cannot merge"):
        record(1).merged_with(record(2))


# --- AttemptLog ----------------------------------------------------------------------------


def lines(run_dir: Path) -> list[str]:
    """The record lines, after the header that opens every log."""
    header, *records = (run_dir / ATTEMPTS_FILE).read_text().splitlines()
    assert json.loads(header)["schema"] == "crashloop-attempts"
    return records


def test_a_log_opens_with_its_layout_and_the_harness_that_wrote_it(tmp_path: Path) -> None:
    with AttemptLog(tmp_path) as log:
        log.append(record(0))
    header = json.loads((tmp_path / ATTEMPTS_FILE).read_text().splitlines()[0])
    assert header == {
        "schema": "crashloop-attempts",
        "schema_version": 1,
        "harness_version": harness_version(),
    }
    assert read_attempts(tmp_path / ATTEMPTS_FILE) == [record(0)]


def test_a_log_of_another_layout_is_refused_naming_its_writer(tmp_path: Path) -> None:
    path = tmp_path / ATTEMPTS_FILE
    path.write_text(
        '{"schema": "crashloop-attempts", "schema_version": 9, "harness_version": "9.0"}\n'
        + record(0).to_json()
        + "\n"
    )
    with pytest.raises(AttemptLogError, match=r"layout version 9.*crashloop-harness 9\.0"):
        read_attempts(path)


def test_a_log_written_before_the_header_still_reads(tmp_path: Path) -> None:
    path = tmp_path / ATTEMPTS_FILE
    path.write_text(record(0).to_json() + "\n" + record(1).to_json() + "\n")
    assert read_attempts(path) == [record(0), record(1)]


def test_log_writes_one_line_per_record(tmp_path: Path) -> None:
    with AttemptLog(tmp_path) as log:
        assert log.append(record(0))
        assert log.append(record(1))
    assert [AttemptRecord.from_json(line).attempt for line in lines(tmp_path)] == [0, 1]


def test_each_append_is_on_disk_before_the_next(tmp_path: Path) -> None:
    log = AttemptLog(tmp_path)
    log.append(record(0))
    # Read while the writer is still open: nothing waits for close().
    assert read_attempts(tmp_path / ATTEMPTS_FILE) == [record(0)]
    log.close()


def test_same_record_again_is_not_written(tmp_path: Path) -> None:
    with AttemptLog(tmp_path) as log:
        assert log.append(record(0))
        assert not log.append(record(0))
    assert len(lines(tmp_path)) == 1


def test_more_information_is_an_update_line(tmp_path: Path) -> None:
    with AttemptLog(tmp_path) as log:
        log.append(record(0))
        assert log.append(record(0, finished_at_ns=T0 + 50, exit_code=1))
        # A later observation that lacks the finish does not erase it.
        assert not log.append(record(0))
    assert len(lines(tmp_path)) == 2
    (latest,) = read_attempts(tmp_path / ATTEMPTS_FILE)
    assert latest.finished_at_ns == T0 + 50
    assert latest.exit_code == 1


def test_readers_keep_latest_per_key_in_first_seen_order(tmp_path: Path) -> None:
    with AttemptLog(tmp_path) as log:
        written = log.extend(
            [record(0), record(1), record(0, finished_at_ns=T0 + 1), record(2, container="side")]
        )
        assert written == 4
        assert [r.key[1:] for r in log.latest()] == [("app", 0), ("app", 1), ("side", 2)]
    got = read_attempts(tmp_path / ATTEMPTS_FILE)
    assert [(r.container, r.attempt, r.finished_at_ns) for r in got] == [
        ("app", 0, T0 + 1),
        ("app", 1, None),
        ("side", 2, None),
    ]


def test_truncated_last_line_is_tolerated(tmp_path: Path) -> None:
    path = tmp_path / ATTEMPTS_FILE
    full = record(0).to_json() + "\n" + record(1).to_json() + "\n"
    path.write_text(full + record(2).to_json()[:37])
    assert [r.attempt for r in read_attempts(path)] == [0, 1]


def test_bad_line_in_the_middle_is_corruption(tmp_path: Path) -> None:
    path = tmp_path / ATTEMPTS_FILE
    path.write_text(record(0).to_json() + "\n{garbage\n" + record(1).to_json() + "\n")
    with pytest.raises(AttemptLogError, match=":2:"):
        read_attempts(path)


def test_bad_but_terminated_last_line_is_corruption(tmp_path: Path) -> None:
    # A torn write never ends in a newline; a complete bad line is not a tear.
    path = tmp_path / ATTEMPTS_FILE
    path.write_text(record(0).to_json() + "\n{garbage\n")
    with pytest.raises(AttemptLogError, match=":2:"):
        read_attempts(path)


def test_resuming_a_log_dedupes_against_it(tmp_path: Path) -> None:
    with AttemptLog(tmp_path) as log:
        log.append(record(0))
    with AttemptLog(tmp_path) as log:
        assert not log.append(record(0))
        assert log.append(record(1))
    assert len(lines(tmp_path)) == 2


def test_resuming_cuts_a_torn_tail_before_appending(tmp_path: Path) -> None:
    path = tmp_path / ATTEMPTS_FILE
    path.write_text(record(0).to_json() + "\n" + record(1).to_json()[:20])
    with AttemptLog(tmp_path) as log:
        log.append(record(2))
    assert [r.attempt for r in read_attempts(path)] == [0, 2]
    assert path.read_text().endswith("\n")


def test_resuming_keeps_a_complete_line_missing_its_newline(tmp_path: Path) -> None:
    path = tmp_path / ATTEMPTS_FILE
    path.write_text(record(0).to_json() + "\n" + record(1).to_json())
    with AttemptLog(tmp_path) as log:
        log.append(record(2))
    assert [r.attempt for r in read_attempts(path)] == [0, 1, 2]


def test_a_runtime_observation_after_the_report_keeps_that_the_finish_is_a_heartbeat() -> None:
    # The pod watch read a killed attempt's heartbeat; the runtime's next look at
    # the same attempt knows nothing of it and must not undo it.
    from_runtime = record(finished_at_ns=None)
    with_report = dataclasses.replace(
        from_runtime, self_started_at_ns=1, self_finished_at_ns=2, self_finish_is_heartbeat=True
    )
    later = dataclasses.replace(from_runtime, finished_at_ns=3)
    merged = with_report.merged_with(later)
    assert merged.finished_at_ns == 3
    assert (merged.self_finished_at_ns, merged.self_finish_is_heartbeat) == (2, True)
