"""The run report (crashloop_harness.outputs.report): Markdown and self-contained HTML."""

from __future__ import annotations

import base64
import dataclasses
import re
from pathlib import Path

import pytest

from crashloop_harness.outputs.document import (
    REPORT_MD,
    Block,
    Bullets,
    Heading,
    Paragraph,
    Table,
    md_escape,
    to_html,
    to_markdown,
)
from crashloop_harness.outputs.report import report_blocks, talk_takeaways, write_report
from crashloop_harness.outputs.summary import RunSummary
from crashloop_harness.recording.hostcpu import CpuSample
from crashloop_harness.scenarios.headline import ScenarioMetric
from tests.unit.factories import (
    PNG_MAGIC,
    WORKERS,
    default_verdict,
    failing_summary,
    fast_verdict,
    make_summary,
    quick_attempts,
    quick_summary,
    scenario_metrics,
)

EVIL = "<script>alert('x')</script> & | *bold*"


def embedded_pngs(html: str) -> list[bytes]:
    return [base64.b64decode(m) for m in re.findall(r'src="data:image/png;base64,([^"]+)"', html)]


def evil_summary() -> RunSummary:
    """The quick run with hostile text wherever the report prints data."""
    summary = quick_summary()
    first = dataclasses.replace(summary.workers[0], worker=EVIL, notes=(EVIL,))
    return dataclasses.replace(summary, reason=EVIL, workers=(first, *summary.workers[1:]))


@pytest.fixture(scope="module")
def full_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of the quick run with scenario metrics, written once: plotting is slow."""
    run_dir = tmp_path_factory.mktemp("run")
    html_path = write_report(run_dir, quick_summary(), quick_attempts(), scenario_metrics())
    assert html_path == run_dir / "report.html"
    return run_dir


def test_write_report_makes_a_self_contained_html_and_a_markdown(full_report: Path) -> None:
    html_path = full_report / "report.html"
    html = html_path.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert "<title>CrashLoopBackOff run 20261130T024954Z-check-quick-1cbd</title>" in html
    images = embedded_pngs(html)
    assert len(images) == 4  # delays, timeline, start latency, scenarios
    assert all(image.startswith(PNG_MAGIC) for image in images)
    assert html.count("<table>") == 4 + len(WORKERS)  # verdict, cluster, config, takeaways
    for worker in WORKERS:
        assert f"<h3>{worker} on crashloop-worker" in html
    assert '<td class="pass">PASS</td>' in html
    assert "FAIL" not in html
    for name in ("delays", "timeline", "start-latency", "scenarios"):
        assert (full_report / f"{name}.png").exists()
        assert (full_report / f"{name}.svg").exists()


def test_the_report_shows_config_verdict_and_each_restart(tmp_path: Path) -> None:
    html = write_report(tmp_path, quick_summary(), quick_attempts()).read_text(encoding="utf-8")
    assert "<p>PASSED</p>" in html
    assert "<td>crashloop.local/node:v1.35.8</td>" in html
    assert "<td>KubeletCrashLoopBackOffMax=on, ReduceDefaultCrashLoopBackOffDecay=on</td>" in html
    assert "<td>10s..300s</td>" in html
    # Restart 2 of the fast worker: 2s expected, 2.790s measured, 4.5s allowed.
    assert "<tr><td>2</td><td>2s</td><td>2.790s</td><td>+0.790s</td><td>4.5s</td>" in html
    assert "Takeaways" not in html
    assert len(embedded_pngs(html)) == 3
    assert "<details><summary>24 notes</summary>" in html


def test_the_markdown_links_the_plots_and_shortens_notes(full_report: Path) -> None:
    markdown = (full_report / REPORT_MD).read_text(encoding="utf-8")
    assert markdown.startswith("# PASSED: CrashLoopBackOff run 20261130T024954Z-check-quick-1cbd\n")
    for name in ("delays", "timeline", "start-latency", "scenarios"):
        assert f"]({name}.png)" in markdown
    assert "| restart n | expected | measured | margin | upper bound |" in markdown
    assert "| 2 | 2s | 2.790s | +0.790s | 4.5s | 2s | PASS | on the curve |" in markdown
    assert "- ... 19 more in summary.json" in markdown


def takeaways(metrics: list[ScenarioMetric]) -> Table:
    blocks = report_blocks(quick_summary(), (), metrics)
    table = blocks[blocks.index(Heading(2, "Takeaways: scenarios, measured vs model")) + 1]
    assert isinstance(table, Table)
    return table


def test_takeaways_put_measured_next_to_model_per_worker() -> None:
    table = takeaways(scenario_metrics())
    assert table.headers == ("scenario", "metric", *WORKERS)
    assert table.rows[0] == (
        "task isolation",
        "reset time (s)",
        "3.1 (model 2)",
        "2.2 (model 1)",
        "14.8 (model 10)",
    )
    assert table.rows[2][3] == "not reached (model 1)"
    # A headline outside the window the kubelet's code allows says so, beside the window.
    assert table.rows[1][4] == "84.1 OUTSIDE (model 70; the kubelet's window 70-80.5)"


def test_a_missing_worker_cell_is_a_dash() -> None:
    metrics = [
        ScenarioMetric("s1", "fast", "m", "s", 1, 1.5),
        ScenarioMetric("s2", "default", "m", "s", 10, 12),
    ]
    assert takeaways(metrics).rows == (
        ("s1", "m (s)", "1.5 (model 1)", "-"),
        ("s2", "m (s)", "-", "12 (model 10)"),
    )


def html_of(summary: RunSummary, metrics: list[ScenarioMetric] | None = None) -> str:
    """The HTML without plots: rendering them is slow and beside the point here."""
    return to_html(report_blocks(summary, (), metrics or []), "report")


def test_a_failing_run_lists_its_failures() -> None:
    html = html_of(failing_summary())
    assert "<p>FAILED</p>" in html
    assert '<td class="fail">FAIL</td>' in html
    assert "<li>default: restart 3: expected 20s" in html


def test_data_is_escaped_in_html() -> None:
    html = html_of(evil_summary(), [ScenarioMetric(EVIL, EVIL, EVIL, "s", 1, 2)])
    assert "<script>" not in html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; | *bold*" in html


def test_data_is_escaped_in_markdown() -> None:
    markdown = to_markdown(report_blocks(evil_summary()))
    assert "<script>" not in markdown
    assert r"\<script\>alert('x')\</script\> \& \| \*bold\*" in markdown


def test_md_escape_keeps_a_cell_on_one_line() -> None:
    assert md_escape("a|b\nc_d") == r"a\|b c\_d"


def test_renderers_agree_on_blocks() -> None:
    blocks: list[Block] = [Heading(2, "T"), Bullets(("a", "b")), Table(("h",), (("PASS",),))]
    assert to_markdown(blocks) == "## T\n\n- a\n- b\n\n| h |\n|---|\n| PASS |\n"
    html = to_html(blocks, "t")
    assert "<h2>T</h2><ul><li>a</li><li>b</li></ul>" in html.replace("\n", "")
    assert '<td class="pass">PASS</td>' in html


def test_the_report_opens_with_its_verdict_then_the_talk_s_takeaways_each_with_a_number() -> None:
    summary = make_summary(fast_verdict(), default_verdict())
    heavy, control, marathon = talk_takeaways(summary).items
    assert heavy.startswith("Container restarts are heavy")
    assert "restarts here" in heavy
    assert control.startswith("KEP-4603 and KEP-5593")
    assert "fast (cap 2 s)" in control
    assert "default (cap 300 s)" in control
    assert marathon.startswith("Open source is a marathon")
    assert summary.cluster.kubernetes_version in marathon
    blocks = report_blocks(summary)
    assert blocks[0] == Heading(1, f"FAILED: CrashLoopBackOff run {summary.run_id}")
    assert blocks[1:3] == [Heading(2, "Verdict"), Paragraph("FAILED")]
    titles = [b for b in blocks if isinstance(b, Heading)]
    assert titles.index(Heading(2, "The talk's takeaways, from this run")) == 2


def test_a_demo_s_host_cpu_stands_beside_each_restart(tmp_path: Path) -> None:
    attempts = quick_attempts()
    restart_2 = next(a for a in attempts["fast"] if a.attempt == 2)
    samples = [CpuSample(restart_2.started_at_ns + 500_000_000, 0.97)]
    html = write_report(tmp_path, quick_summary(), attempts, host_cpu=samples).read_text(
        encoding="utf-8"
    )
    assert "<th>host CPU at start</th>" in html
    # Fast restart 2 started in a second the host was 97 % busy; restart 3 has no sample.
    assert "<td>4.5s</td><td>2s</td><td>97%</td>" in html
    plain = tmp_path / "plain"
    plain.mkdir()
    assert "host CPU at start" not in write_report(plain, quick_summary(), attempts).read_text(
        encoding="utf-8"
    )
