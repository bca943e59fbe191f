"""What differs between kubelet minor versions, for the back-off model (pure).

Read in each release's source (see the notes on kubelet versions for every
citation); only what changes a curve, its tolerance or whether a config starts:

- which feature gates exist, their default, and whether one is locked;
- which gates another gate needs (component-base refuses the set otherwise);
- how late the pod worker looks again at a container in back-off. Before 1.35
  it is requeued every 10-15s whatever the back-off (``completeWork`` enqueues
  ``Jitter(10s, 0.5)``); from 1.35 at the back-off's expiry plus up to half of
  what was left, counted up to the 1 min sync frequency.

The curve arithmetic itself (``newCrashLoopBackOff``, client-go's Backoff, the
flat 600s reset) is the same in every release here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

KUBELET_CRASHLOOP_BACKOFF_MAX: Final = "KubeletCrashLoopBackOffMax"
REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY: Final = "ReduceDefaultCrashLoopBackOffDecay"
CONTAINER_RESTART_RULES: Final = "ContainerRestartRules"
RESTART_ALL_CONTAINERS: Final = "RestartAllContainersOnContainerExits"
NODE_DECLARED_FEATURES: Final = "NodeDeclaredFeatures"
# Pseudo-gates of k8s.io/component-base: they switch every alpha (beta) gate
# that is not set explicitly, so they change the curve and must be honoured.
ALL_ALPHA: Final = "AllAlpha"
ALL_BETA: Final = "AllBeta"

Stage = Literal["alpha", "beta", "ga"]
# How the pod worker comes back to a container in back-off.
Requeue = Literal["at-expiry", "every-10-15s"]
AT_EXPIRY: Final[Requeue] = "at-expiry"
EVERY_10_15S: Final[Requeue] = "every-10-15s"


@dataclass(frozen=True)
class Gate:
    """One feature gate as a release defines it."""

    stage: Stage
    default: bool
    locked: bool = False  # GA and locked to its default: setting the other value fails

    @property
    def stage_switch(self) -> str | None:
        """The pseudo-gate that flips it when it is not set itself."""
        return {"alpha": ALL_ALPHA, "beta": ALL_BETA}.get(self.stage)


@dataclass(frozen=True)
class KubeletRelease:
    """The facts of one kubelet minor version that the model depends on."""

    minor: int
    gates: Mapping[str, Gate]
    # gate -> gates that must be enabled while it is.
    dependencies: Mapping[str, tuple[str, ...]]
    requeue: Requeue

    @property
    def name(self) -> str:
        return f"1.{self.minor}"


def _release(
    minor: int,
    requeue: Requeue,
    gates: Mapping[str, Gate],
    dependencies: Mapping[str, tuple[str, ...]] | None = None,
) -> KubeletRelease:
    return KubeletRelease(
        minor=minor,
        gates=MappingProxyType(dict(gates)),
        dependencies=MappingProxyType(dict(dependencies or {})),
        requeue=requeue,
    )


_ALPHA_OFF: Final = Gate("alpha", default=False)
_BETA_ON: Final = Gate("beta", default=True)
_GA_LOCKED: Final = Gate("ga", default=True, locked=True)
# KEP-5532 needs per-container restart rules and declared node features.
_RESTART_ALL_NEEDS: Final = {
    RESTART_ALL_CONTAINERS: (CONTAINER_RESTART_RULES, NODE_DECLARED_FEATURES)
}

RELEASES: Final[Mapping[int, KubeletRelease]] = MappingProxyType(
    {
        33: _release(
            33,
            EVERY_10_15S,
            {
                KUBELET_CRASHLOOP_BACKOFF_MAX: _ALPHA_OFF,
                REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY: _ALPHA_OFF,
            },
        ),
        34: _release(
            34,
            EVERY_10_15S,
            {
                KUBELET_CRASHLOOP_BACKOFF_MAX: _ALPHA_OFF,
                REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY: _ALPHA_OFF,
                CONTAINER_RESTART_RULES: _ALPHA_OFF,
            },
        ),
        35: _release(
            35,
            AT_EXPIRY,
            {
                KUBELET_CRASHLOOP_BACKOFF_MAX: _BETA_ON,
                REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY: _ALPHA_OFF,
                CONTAINER_RESTART_RULES: _BETA_ON,
                RESTART_ALL_CONTAINERS: _ALPHA_OFF,
                NODE_DECLARED_FEATURES: _ALPHA_OFF,
            },
            _RESTART_ALL_NEEDS,
        ),
        36: _release(
            36,
            AT_EXPIRY,
            {
                KUBELET_CRASHLOOP_BACKOFF_MAX: _BETA_ON,
                REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY: _ALPHA_OFF,
                CONTAINER_RESTART_RULES: _BETA_ON,
                RESTART_ALL_CONTAINERS: _BETA_ON,
                NODE_DECLARED_FEATURES: _BETA_ON,
            },
            _RESTART_ALL_NEEDS,
        ),
        **{
            minor: _release(
                minor,
                AT_EXPIRY,
                {
                    KUBELET_CRASHLOOP_BACKOFF_MAX: _BETA_ON,
                    REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY: _ALPHA_OFF,
                    CONTAINER_RESTART_RULES: _BETA_ON,
                    RESTART_ALL_CONTAINERS: _BETA_ON,
                    NODE_DECLARED_FEATURES: _GA_LOCKED,
                },
                _RESTART_ALL_NEEDS,
            )
            for minor in (37, 38)
        },
    }
)
# The release the talk is about, and the harness's default.
DEFAULT_RELEASE: Final = RELEASES[35]

_VERSION: Final = re.compile(r"^v?1\.(?P<minor>\d+)(?:\.\d+)?(?:[-+].*)?$")


def gates_to_enable(release: KubeletRelease, gate: str) -> dict[str, bool]:
    """What turns ``gate`` on in ``release``: it and each gate it needs, where off by default.

    Empty where everything is on already, or where the release lacks ``gate``
    (nothing can turn it on there).
    """
    if gate not in release.gates:
        return {}
    wanted = [gate, *release.dependencies.get(gate, ())]
    return {
        name: True for name in wanted if name in release.gates and not release.gates[name].default
    }


def release_of(version: str) -> KubeletRelease:
    """The release of a kubelet version such as "v1.34.11", "1.36" or "v1.38.0-beta.0".

    Raises ValueError naming the versions the model knows for anything else.
    """
    match = _VERSION.match(version.strip())
    release = RELEASES.get(int(match.group("minor"))) if match else None
    if release is None:
        known = ", ".join(r.name for r in RELEASES.values())
        raise ValueError(
            f"kubelet version {version!r} is not one the back-off model knows; it knows {known}"
        )
    return release
