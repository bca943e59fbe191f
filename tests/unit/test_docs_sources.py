"""The docs site links the source it names (scripts/mkdocs_sources.py, an mkdocs hook)."""

from __future__ import annotations

from tests.unit.scripts import load_script

hook = load_script("mkdocs_sources")
ENGINE = "harness/crashloop_harness/fleet/engine.py"


def test_a_named_source_file_becomes_a_link_from_the_page_s_folder() -> None:
    assert hook.link_sources(f"See `{ENGINE}`.", "check.md") == f"See [`{ENGINE}`](src/{ENGINE})."
    assert hook.link_sources(f"`{ENGINE}`", "fleet/x.md") == f"[`{ENGINE}`](../src/{ENGINE})"


def test_folders_markdown_missing_files_links_and_fenced_code_stay_as_written() -> None:
    kept = [
        "`harness/crashloop_harness/`",  # a folder
        "`harness/crashloop_harness/resources/demo/RECORDING.md`",  # a page to mkdocs
        "`harness/crashloop_harness/gone.py`",  # no such file
        f"[`{ENGINE}`](elsewhere)",  # a link already
        f"```\n`{ENGINE}`\n```",  # code shown as code
    ]
    for markdown in kept:
        assert hook.link_sources(markdown, "check.md") == markdown


def test_the_site_carries_each_file_a_page_names() -> None:
    assert hook.named_sources(f"`{ENGINE}` and `harness/crashloop_harness/`") == {ENGINE}
