"""The version matrix's analysis: lines per worker, changes between releases, matrix.json."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from crashloop_harness.core.errors import HarnessError
from crashloop_harness.outputs.matrix import (
    MATRIX_FILE,
    TABLE_HEADERS,
    Matrix,
    MatrixEntry,
    WorkerLine,
    _version_key,
    against,
    behaviour_changes,
    entry_of,
    markdown_table,
    matrix_of_runs,
    read_matrix,
    table_rows,
    write_matrix,
)
from crashloop_harness.outputs.plots import plot_matrix
from crashloop_harness.outputs.summary import RunSummary
from crashloop_harness.outputs.summaryfile import write_summary
from crashloop_harness.runs.matrix import matrix_from_runs
from tests.unit.factories import fast_verdict, make_summary


def _line(worker: str, median: float | None, passed: bool = True) -> WorkerLine:
    return WorkerLine(
        worker=worker,
        passed=passed,
        restarts=10,
        first_delays_s=(0.9, median),
        median_delay_s=median,
        overshoot_median_s=0.5,
        overshoot_max_s=1.5,
        reported_levels_s=(2.0,),
    )


def _entry(version: str, *lines: WorkerLine, status: str = "passed") -> MatrixEntry:
    return MatrixEntry(version, "crashloop", "/runs/x", status, "", tuple(lines))


def test_a_median_delay_that_moves_beyond_the_noise_is_a_behaviour_change() -> None:
    entries = [
        _entry("v1.34.11", _line("fast", 12.6), _line("default", 40.0)),
        _entry("v1.35.8", _line("fast", 2.9), _line("default", 41.5)),
    ]
    assert behaviour_changes(entries) == ["fast, 1.34 -> 1.35: median delay 12.6s -> 2.9s"]


def test_small_or_unmeasured_differences_are_not_changes() -> None:
    entries = [
        _entry("v1.35.8", _line("fast", 2.9), _line("reduced", None)),
        _entry("v1.36.4", _line("fast", 3.6), _line("reduced", 9.0)),
    ]
    assert behaviour_changes(entries) == []


def test_changes_are_between_neighbours_only() -> None:
    entries = [
        _entry("v1.33.13", _line("fast", 12.0)),
        _entry("v1.34.11", _line("fast", 12.5)),
        _entry("v1.35.8", _line("fast", 2.8)),
    ]
    assert behaviour_changes(entries) == ["fast, 1.34 -> 1.35: median delay 12.5s -> 2.8s"]


def test_an_entry_from_a_summary_keeps_every_worker_and_its_levels(tmp_path: Path) -> None:
    summary = make_summary(fast_verdict())
    entry = entry_of("v1.35.8", summary, tmp_path)
    (line,) = entry.workers
    assert line.worker == summary.workers[0].worker
    assert line.restarts == len(summary.workers[0].checks)
    assert line.median_delay_s is not None
    assert entry.status == summary.status


def test_the_matrix_passes_only_when_every_release_passed(tmp_path: Path) -> None:
    matrix = Matrix("quick", [_entry("v1.34.11", _line("fast", 12.0))])
    assert matrix.passed
    matrix.entries.append(_entry("v1.35.8", _line("fast", 2.9, passed=False), status="failed"))
    assert not matrix.passed
    assert not Matrix("quick").passed, "an empty matrix proves nothing"
    written = json.loads(write_matrix(tmp_path, matrix).read_text())
    assert (tmp_path / MATRIX_FILE).exists()
    assert written["passed"] is False
    assert [e["version"] for e in written["entries"]] == ["v1.34.11", "v1.35.8"]
    assert written["changes"] == ["fast, 1.34 -> 1.35: median delay 12.0s -> 2.9s"]


def test_table_rows_name_a_release_without_workers_by_its_reason() -> None:
    matrix = Matrix(
        "quick",
        [
            MatrixEntry("v1.37.0", "crashloop-1-37", "", "error", "cluster: kubelet refused"),
            _entry("v1.35.8", _line("fast", 2.9)),
        ],
    )
    rows = table_rows(matrix)
    assert all(len(row) == len(TABLE_HEADERS) for row in rows)
    assert rows[0][:3] == ("v1.37.0", "-", "error")
    assert "kubelet refused" in rows[0][4]
    assert rows[1][:4] == ("v1.35.8", "fast", "pass", "10")


def test_the_matrix_plot_draws_every_release_per_worker(tmp_path: Path) -> None:
    with_delays = replace(_line("fast", 12.0), delays_s=(0.9, 12.0, None, 13.0))
    matrix = Matrix(
        "quick",
        [_entry("v1.34.11", with_delays), _entry("v1.35.8", _line("fast", 2.6))],
    )
    written = plot_matrix(matrix, tmp_path / "matrix-delays")
    assert [p.suffix for p in written] == [".png", ".svg"]
    svg = written[1].read_text()
    for text in ("v1.34.11", "v1.35.8", "fast"):
        assert text in svg


def test_an_empty_matrix_still_gets_a_plot_that_says_why(tmp_path: Path) -> None:
    (png, svg) = plot_matrix(Matrix("quick"), tmp_path / "empty")
    assert png.stat().st_size > 0
    assert "no release was measured" in svg.read_text()


def _summary_on(version: str, *, kind: str = "conformance") -> RunSummary:
    summary = make_summary(fast_verdict())
    return replace(summary, kind=kind, cluster=replace(summary.cluster, kubernetes_version=version))


def test_runs_made_apart_line_up_in_release_order_not_the_order_given(tmp_path: Path) -> None:
    runs = [
        (_summary_on("v1.38.0-beta.0"), tmp_path / "c"),
        (_summary_on("v1.35.8"), tmp_path / "b"),
        (_summary_on("v1.9.1"), tmp_path / "a"),
    ]
    matrix = matrix_of_runs(runs)
    assert [entry.version for entry in matrix.entries] == ["v1.9.1", "v1.35.8", "v1.38.0-beta.0"]
    assert matrix.profile == "quick"
    assert matrix.passed


def test_the_markdown_table_has_a_row_per_release_and_worker_and_says_what_failed() -> None:
    matrix = Matrix(
        "quick",
        [
            _entry("v1.34.11", _line("fast", 12.6)),
            _entry("v1.35.8", _line("fast", 2.9, passed=False), status="failed"),
        ],
    )
    text = markdown_table(matrix)
    assert "NOT passed" in text
    rows = [line for line in text.splitlines() if line.startswith("| v1.")]
    assert len(rows) == 2
    assert "| failed |" in rows[1]
    assert all(row.count("|") == len(TABLE_HEADERS) + 1 for row in rows)
    assert "- fast, 1.34 -> 1.35: median delay 12.6s -> 2.9s" in text


def test_a_matrix_from_run_directories_takes_only_conformance_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CRASHLOOP_RUNS_DIR", str(tmp_path / "out"))
    downloaded = tmp_path / "nightly"
    for job, summary in [
        ("runs-kubernetes-1.36", _summary_on("v1.36.4")),
        ("runs-kubernetes-1.34", _summary_on("v1.34.11")),
        ("runs-kubernetes-1.35", _summary_on("v1.35.8", kind="scenario:fast-restart")),
    ]:
        run_dir = downloaded / job / "20261130T000000Z-check-full-0001"
        run_dir.mkdir(parents=True)
        write_summary(run_dir, summary)
    matrix, where = matrix_from_runs([downloaded])
    assert [entry.version for entry in matrix.entries] == ["v1.34.11", "v1.36.4"]
    assert json.loads((where / MATRIX_FILE).read_text())["passed"] is True


def test_a_matrix_from_run_directories_refuses_a_check_of_another_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CRASHLOOP_RUNS_DIR", str(tmp_path / "out"))
    downloaded = tmp_path / "nightly"
    for name, summary in [
        ("20261130T000000Z-check-full-0001", _summary_on("v1.36.4")),
        ("20261130T000000Z-check-demo-0002", replace(_summary_on("v1.35.8"), profile="demo")),
    ]:
        (downloaded / name).mkdir(parents=True)
        write_summary(downloaded / name, summary)
    with pytest.raises(HarnessError, match="is a check with profile demo, not a quick or full"):
        matrix_from_runs([downloaded])


def test_a_matrix_from_directories_without_a_check_run_is_refused(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="no check run"):
        matrix_from_runs([tmp_path])
    with pytest.raises(HarnessError, match="not a directory"):
        matrix_from_runs([tmp_path / "missing"])


KEPT = Path(__file__).resolve().parents[3] / "docs" / "matrix"


def test_every_kept_matrix_reads_back_as_it_was_written() -> None:
    kept = sorted(KEPT.glob("*.json"))
    assert kept, "docs/matrix/ keeps no matrix"
    for path in kept:
        matrix = read_matrix(path)
        assert matrix.entries, path
        again = json.loads(json.dumps(matrix.to_dict()))
        assert json.loads(path.read_text())["entries"] == again["entries"]
        # Published data names runs, never a path of the machine that made them.
        assert all("/" not in entry.run_dir for entry in matrix.entries), path


def test_a_matrix_that_is_not_one_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "matrix.json"
    path.write_text('{"schema_version": 1, "entries": [{"version": 3}]}')
    with pytest.raises(HarnessError, match=r"matrix.json: entries\.0"):
        read_matrix(path)
    path.write_text("not json")
    with pytest.raises(HarnessError, match=r"not a readable matrix\.json"):
        read_matrix(path)


def test_against_a_published_matrix_says_what_moved_and_nothing_else() -> None:
    published = Matrix(
        "quick",
        [
            _entry("v1.34.11", _line("fast", 14.6)),
            _entry("v1.35.8", _line("fast", 2.7), _line("reduced", 22.0)),
        ],
    )
    new = Matrix(
        "quick",
        [
            _entry("v1.35.9", _line("fast", 2.8), _line("reduced", 45.0)),
            _entry("v1.36.4", _line("fast", 2.7), status="failed"),
        ],
    )
    assert against(published, new) == [
        "1.34: only in the published matrix",
        "1.35 reduced: median delay 22.0s -> 45.0s",
        "1.36: only in the new run",
    ]
    assert against(published, published) == []


def test_a_release_whose_result_changed_is_named_with_both_patches() -> None:
    published = Matrix("quick", [_entry("v1.35.8", _line("fast", 2.7))])
    new = Matrix("quick", [_entry("v1.35.9", _line("fast", 2.7), status="failed")])
    assert against(published, new) == ["1.35: passed (v1.35.8) -> failed (v1.35.9)"]


def test_releases_sort_with_a_pre_release_before_its_release() -> None:
    versions = ["v1.38.0", "1.35", "v1.38.0-beta.0", "v1.37.2"]
    assert sorted(versions, key=_version_key) == ["1.35", "v1.37.2", "v1.38.0-beta.0", "v1.38.0"]
