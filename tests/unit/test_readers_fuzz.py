"""Every reader of a file a user hands in, fed arbitrary bytes: an answer or the reader's own
error (a HarnessError, exit 2 with a fix), never a traceback.

Each reader gets bytes of every shape (hypothesis), and the same bytes bent towards the
file's own grammar (YAML mappings, JSON objects and lines), where its parsers get furthest.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crashloop_harness.cluster.kubeconfig import context_endpoints, context_names, remote_api
from crashloop_harness.cluster.profiles import ProfileError, load_cluster_spec
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.outputs.summaryfile import read_summary
from crashloop_harness.recording.records import AttemptLogError, read_attempts

# Plain values as YAML and JSON hold them, nested a little.
_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)
# What a user might hand in: any bytes, any text, a YAML or JSON document of any shape.
_CONTENTS = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300).map(lambda text: text.encode("utf-8")),
    _VALUES.map(lambda value: yaml.safe_dump(value).encode("utf-8")),
    _VALUES.map(lambda value: json.dumps(value).encode("utf-8")),
    st.lists(_VALUES, max_size=4).map(
        lambda rows: "\n".join(json.dumps(r) for r in rows).encode("utf-8")
    ),
)
_FUZZ = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _kubeconfig(path: Path) -> Any:
    context_names(path)
    context_endpoints(path)
    return remote_api(path, None)


def _summary(path: Path) -> Any:
    return read_summary(path)


def _attempts(path: Path) -> Any:
    return read_attempts(path)


def _spec(path: Path) -> Any:
    return load_cluster_spec(str(path))


READERS: dict[str, tuple[Callable[[Path], Any], tuple[type[Exception], ...], str]] = {
    "kubeconfig": (_kubeconfig, (HarnessError,), "config"),
    "summary": (_summary, (HarnessError,), "summary.json"),
    # The attempt log's own error, which every command catches into exit 2.
    "attempts": (_attempts, (AttemptLogError,), "attempts.jsonl"),
    # The spec's own error, which every command catches into exit 2 as well.
    "cluster spec": (_spec, (ProfileError,), "spec.yaml"),
}


@pytest.mark.parametrize("reader", list(READERS))
@_FUZZ
@given(content=_CONTENTS)
def test_a_reader_answers_or_refuses_any_bytes_in_its_own_words(
    reader: str, content: bytes, tmp_path: Path
) -> None:
    read, refusals, name = READERS[reader]
    path = tmp_path / name
    path.write_bytes(content)
    said = ""
    try:
        read(path)
    except refusals as error:
        said = str(error).strip() or f"{reader}: an empty refusal"
    assert "an empty refusal" not in said
