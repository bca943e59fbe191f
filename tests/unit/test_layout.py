"""The tree is the pipeline: nothing loose at the top, no import upward, no cycle,
and no module or function over its size limit unless the architecture page names it."""

from __future__ import annotations

import ast
import graphlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "harness"
PACKAGE = SOURCE / "crashloop_harness"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
MODULE_LINES = 400
FUNCTION_LINES = 60
# The chain's last step names the plugin as it reads for people; its package is plugin/.
_STAGE_NAMES = {"pytest plugin": "plugin"}


def _stages() -> list[str]:
    """The stages in order, read from the chain at the top of the architecture page."""
    chain = next(line for line in ARCHITECTURE.read_text().splitlines() if " -> " in line)
    stages = []
    for step in chain.split(" -> "):
        for name in step.split(","):
            stages.append(_STAGE_NAMES.get(name.strip(), name.strip()))
    return stages


def _modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(SOURCE).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield name, path


def _imported(tree: ast.AST, module: str, is_package: bool) -> Iterator[str]:
    """Every harness module ``module`` imports, resolved to a module (or package) name."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (
                alias.name for alias in node.names if alias.name.startswith("crashloop_harness.")
            )
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            if not (base == "crashloop_harness" or base.startswith("crashloop_harness.")):
                continue
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                as_path = SOURCE / Path(*submodule.split("."))
                known = as_path.with_suffix(".py").is_file() or (as_path / "__init__.py").is_file()
                yield submodule if known else base


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, path in _modules():
        tree = ast.parse(path.read_text(), str(path))
        graph[name] = set(_imported(tree, name, path.name == "__init__.py")) - {name}
    return graph


def _stage_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_nothing_is_loose_at_the_top_of_the_package() -> None:
    loose = [p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"]
    assert loose == [], (
        f"modules at harness/crashloop_harness/: {loose}; each belongs in its stage's package"
    )


def test_every_package_is_a_stage_of_the_chain() -> None:
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert packages == set(_stages()), (
        "docs/architecture.md's chain and harness/crashloop_harness/ differ"
    )


def test_no_import_runs_upward() -> None:
    rank = {stage: i for i, stage in enumerate(_stages())}
    upward = []
    for module, imports in _graph().items():
        mine = _stage_of(module)
        if mine is None:
            continue
        for target in imports:
            theirs = _stage_of(target)
            if theirs is not None and rank[theirs] > rank[mine]:
                upward.append(f"{module} -> {target}")
    assert upward == [], "imports against the pipeline's order:\n" + "\n".join(upward)


def test_no_modules_import_each_other_round_a_cycle() -> None:
    graph = _graph()
    # A package's __init__ re-exporting its own modules is not a cycle of code:
    # leave out the edges from a package to what it holds.
    edges = {m: {t for t in ts if not t.startswith(m + ".")} for m, ts in graph.items()}
    try:
        tuple(graphlib.TopologicalSorter(edges).static_order())
    except graphlib.CycleError as cycle:
        pytest.fail(f"import cycle: {' -> '.join(cycle.args[1])}")


def _oversized() -> dict[str, int]:
    """Every module over its line limit and function over its own, with its size in lines."""
    found: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        text = path.read_text()
        if len(text.splitlines()) > MODULE_LINES:
            found[where] = len(text.splitlines())
        tree = ast.parse(text)
        for parent in ast.walk(tree):
            for node in ast.iter_child_nodes(parent):
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > FUNCTION_LINES:
                    owner = f"{parent.name}." if isinstance(parent, ast.ClassDef) else ""
                    found[f"{where}:{owner}{node.name}"] = size
    return found


# An item the page names, then its stated size: "`runs/check.py` (about 520 lines)", "(74)".
_NAMED_SIZE: Final = re.compile(r"`([\w/]+\.py(?::[\w.]+)?)`\s*\((?:about\s+)?(\d+)")
# How far a stated size may be from the counted one before the page is stale.
SIZE_TOLERANCE: Final = 0.10


def _named_sizes() -> dict[str, int]:
    page = ARCHITECTURE.read_text()
    section = page[page.index("## Module and function sizes") :]
    section = section[: section.index("\n## ", 1)]
    return {item: int(size) for item, size in _NAMED_SIZE.findall(section)}


def test_every_module_and_function_over_its_limit_is_named_on_the_architecture_page() -> None:
    named = _named_sizes()
    unnamed = [item for item in _oversized() if item not in named]
    assert unnamed == [], (
        f"over {MODULE_LINES} lines (module) or {FUNCTION_LINES} (function) and not named in "
        f"docs/architecture.md's sizes section: {unnamed}; split it, or name it there with why "
        "and its size, as `path.py:function` (N)"
    )


def test_every_item_named_over_its_limit_still_is_and_at_its_stated_size() -> None:
    counted = _oversized()
    gone = [item for item in _named_sizes() if item not in counted]
    assert gone == [], f"named on the sizes page but no longer over its limit: {gone}"
    stale = [
        f"{item}: stated {stated}, counted {counted[item]}"
        for item, stated in _named_sizes().items()
        if abs(counted[item] - stated) > SIZE_TOLERANCE * counted[item]
    ]
    assert stale == [], f"sizes on docs/architecture.md more than 10% off: {stale}"


def test_the_size_rule_names_what_it_finds() -> None:
    # The rule itself can fail: the longest known function is found by name.
    assert "verdict/restart.py:_check_at" in _oversized()
