"""One lifecycle for a measured run: its steps listed once, in one order, with one failure path.

A run kind (the check, the scenarios) says only what differs: what it deploys,
how it observes, how its readers stop and how it concludes. :func:`execute`
does the rest, always in this order, whatever happened before:

1. the kubelets read as they are at the start, the recorder started;
2. ``deploy``, then ``observe`` (until done, decided, stopped or out of time);
3. on Ctrl-C (or SIGTERM, SIGHUP): interrupted; on any other exception: error,
   and the exception goes on after the clean-up;
4. and then always: ``stop`` the readers, read how the run ended (a kubelet
   restarted or stopped, the engine gone), ``conclude`` on what was measured,
   the trace's outcome, the outputs (summary, JUnit), evidence of a failure,
   and the clean-up of the run's namespace: each of them even when one before
   it raised (the run then ends ``error`` naming that step, and its exception
   goes on after the clean-up).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol, TypeVar

from crashloop_harness.cluster.target import KubeletWatch, RunEnding, RunScope, RunTarget
from crashloop_harness.core.conventions import RUN_LABEL
from crashloop_harness.runs.ending import NO_ENDING_READ, trace_outcome
from crashloop_harness.runs.lifecycle import RunSetup, RunState, clean_up

R = TypeVar("R", bound=RunState)
R_contra = TypeVar("R_contra", bound=RunState, contravariant=True)


class RunSteps(Protocol[R_contra]):
    """What one kind of run does at each step; :func:`execute` keeps the order."""

    # The reason an interrupted run gives, e.g. "... before every worker was observed".
    interrupted_reason: str

    def deploy(self, setup: RunSetup, result: R_contra) -> None:
        """Create the run's objects and write its context into the trace."""
        ...

    def observe(self, setup: RunSetup, result: R_contra) -> None:
        """Watch until the run is done; set its status and reason."""
        ...

    def stop(self, setup: RunSetup, result: R_contra) -> None:
        """Stop every reader (the recorder last): nothing is read after this."""
        ...

    def conclude(self, setup: RunSetup, result: R_contra, ending: RunEnding) -> None:
        """Judge what was measured, then let the ending (``apply_ending``) have its say."""
        ...

    def write(self, setup: RunSetup, result: R_contra, cluster: RunTarget) -> None:
        """The run's outputs in its directory; a kind that writes a summary leaves it on
        ``result.summary`` for its caller, who never reads the file back."""
        ...


def _blamed_nodes(setup: RunSetup, result: RunState) -> set[str]:
    """The nodes of the workers a run decided early (a check does; scenarios decide none)."""
    decided: dict[str, object] = getattr(result, "decided", {})
    return {node for worker, node in setup.nodes.items() if worker in decided}


def _wants_evidence(result: RunState, ending: RunEnding) -> bool:
    """A failed or errored run's evidence is kept before its namespace goes; none once the
    engine is gone (there is nothing left to ask)."""
    return result.status in ("failed", "error") and ending.engine_gone is None


def _gather_evidence(cluster: RunTarget, setup: RunSetup, ending: RunEnding) -> None:
    """The run's own pods and judged nodes, as the cluster keeps evidence of them. A node
    whose kubelet stopped is asked for no log or config: each request would wait out its
    timeout on a kubelet that cannot answer, and the run would end minutes after its verdict."""
    run = RunScope(
        f"{RUN_LABEL}={setup.run_id}",
        tuple(sorted(set(setup.nodes.values()))),
        silent=tuple(sorted(ending.stopped)),
    )
    cluster.gather_evidence(setup.api, setup.namespace, setup.run_dir / "evidence", run=run)


def execute(
    cluster: RunTarget,
    setup: RunSetup,
    result: R,
    steps: RunSteps[R],
    *,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> R:
    """Run ``steps`` on ``cluster`` through the one lifecycle; never raises on a bad verdict."""
    kubelets = cluster.kubelets_at_start(setup.api, list(setup.nodes.values()))
    try:
        setup.recorder.start()
        steps.deploy(setup, result)
        steps.observe(setup, result)
    except KeyboardInterrupt:
        result.status = "interrupted"
        result.reason = steps.interrupted_reason
    except Exception as error:
        # Judged and cleaned up like any run, then the error goes on: it is a bug or an
        # environment failure the caller must see, not a verdict.
        result.status = "error"
        result.reason = f"{type(error).__name__}: {error}"
        raise
    finally:
        _finish(cluster, setup, result, steps, kubelets=kubelets, now=now)
    return result


def _finish(
    cluster: RunTarget,
    setup: RunSetup,
    result: R,
    steps: RunSteps[R],
    *,
    kubelets: KubeletWatch,
    now: Callable[[], datetime],
) -> None:
    """The ending, every step of it whatever an earlier one raised, the clean-up last.

    A step that raises does not skip the ones after it (the evidence and the
    namespace's clean-up above all); the run ends ``error`` naming it, and the
    first such exception goes on once every step was taken, the others as its notes.
    """
    failed: list[tuple[str, Exception]] = []

    def step(name: str, action: Callable[[], None]) -> None:
        try:
            action()
        except Exception as error:
            failed.append((name, error))
            if result.status != "error":
                result.status = "error"
                result.reason = f"the run's {name} failed: {type(error).__name__}: {error}"

    ending = NO_ENDING_READ

    def read_ending() -> None:
        nonlocal ending
        ending = kubelets.ending(
            confirm=_blamed_nodes(setup, result), made=result.kubelets_restarted_by_run
        )

    step("stop", lambda: steps.stop(setup, result))
    step("reading of its ending", read_ending)
    if failed:
        # The verdict must not overwrite them: they stand as the ending's errors.
        said = tuple(f"the run's {name} failed: {type(e).__name__}: {e}" for name, e in failed)
        ending = dataclasses.replace(ending, errors=(*ending.errors, *said))
    step("verdict", lambda: steps.conclude(setup, result, ending))
    result.finished_at = now()
    step("trace's outcome", lambda: trace_outcome(setup.recorder.trace, result, ending))
    step("trace's close", setup.recorder.trace.close)
    step("outputs", lambda: steps.write(setup, result, cluster))
    if _wants_evidence(result, ending):
        step("evidence", lambda: _gather_evidence(cluster, setup, ending))
    step("clean-up", lambda: clean_up(setup, ending.engine_gone))
    if failed:
        first = failed[0][1]
        for name, error in failed[1:]:
            first.add_note(f"then the run's {name} failed too: {type(error).__name__}: {error}")
        raise first
