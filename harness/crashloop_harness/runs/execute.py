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
   and the clean-up of the run's namespace.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol, TypeVar

from crashloop_harness.runs.ending import (
    RunEnding,
    ending_of,
    gather_evidence,
    kubelets_at_start,
    trace_outcome,
)
from crashloop_harness.runs.lifecycle import RunSetup, RunState, Target, clean_up

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

    def write(self, setup: RunSetup, result: R_contra, cluster: Target) -> None:
        """The run's outputs in its directory."""
        ...


def _blamed_nodes(setup: RunSetup, result: RunState) -> set[str]:
    """The nodes of the workers a run decided early (a check does; scenarios decide none)."""
    decided: dict[str, object] = getattr(result, "decided", {})
    return {node for worker, node in setup.nodes.items() if worker in decided}


def execute(
    cluster: Target,
    setup: RunSetup,
    result: R,
    steps: RunSteps[R],
    *,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> R:
    """Run ``steps`` on ``cluster`` through the one lifecycle; never raises on a bad verdict."""
    kubelets = kubelets_at_start(cluster, setup.api, list(setup.nodes.values()))
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
        steps.stop(setup, result)
        ending = ending_of(kubelets, confirm=_blamed_nodes(setup, result))
        steps.conclude(setup, result, ending)
        result.finished_at = now()
        trace_outcome(setup.recorder.trace, result, ending)
        setup.recorder.trace.close()
        steps.write(setup, result, cluster)
        gather_evidence(setup.api, cluster, setup.namespace, result, ending)
        clean_up(
            setup.api, setup.namespace, ending.engine_gone, owns_namespace=setup.owns_namespace
        )
    return result
