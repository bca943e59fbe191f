"""A subject's written name, read and written in one place."""

from __future__ import annotations

import pytest

from crashloop_harness.model.subject import RUNS_5S, Subject, is_bare, worker_of


def test_a_name_reads_back_as_the_subject_that_wrote_it() -> None:
    bare = Subject("fast")
    variant = bare.beside(RUNS_5S)
    assert (str(bare), str(variant)) == ("fast", "fast/runs-5s")
    assert Subject.parse(str(variant)) == variant
    assert Subject.parse("fast") == bare
    assert bare.bare
    assert not variant.bare
    # An existing cluster's node names are workers too, dots and dashes included.
    assert worker_of("ip-10-0-1-5.ec2.internal/runs-5s") == "ip-10-0-1-5.ec2.internal"
    assert is_bare("ip-10-0-1-5.ec2.internal")
    assert not is_bare("default/control-590s")


@pytest.mark.parametrize("name", ["", "/runs-5s", "fast/", "fast/runs-5s/again"])
def test_a_name_with_an_empty_part_or_a_second_separator_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="named without '/'"):
        Subject.parse(name)
