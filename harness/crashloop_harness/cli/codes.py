"""The exit codes each kind of `crashloop` command documents, and the environment it reads.

Every verb family's --help ends with one of these; kept together so the codes
read the same everywhere.
"""

from __future__ import annotations

from typing import Final

from crashloop_harness.core.exitcodes import COULD_NOT_JUDGE, INTERRUPTED
from crashloop_harness.overhead.analysis import REPEAT_WITHIN
from crashloop_harness.overhead.pace import PACE_SHOWN

# What a run's exit code means; the same for every command that measures.
MEASURING_CODES: Final = """exit codes:
  0    every verdict passed
  1    a verdict failed, or the run ended an error (a kubelet restarted or stopped, the engine
       went): summary.json's status and reason say which; the run directory (runs/latest)
       has the summary, plots and evidence
  2    bad input, or set-up failed before anything was measured (the message names the fix)
  3    internal error: a bug of the harness (its traceback is printed), never a verdict
  130  interrupted (Ctrl-C, SIGTERM, SIGHUP): what was measured is judged and kept"""

# The check and the nightly: a run that could not judge exits apart from a failure,
# so a nightly can retry an error and page on a failure.
CHECK_CODES: Final = """exit codes:
  0    every verdict passed
  1    a verdict failed: the kubelet is off its curve (summary.json's reason says where); the
       run directory (runs/latest) has the summary, plots and evidence
  2    bad input, or set-up failed before anything was measured (the message names the fix)
  3    internal error: a bug of the harness (its traceback is printed), never a verdict
  4    the run could not judge (status error): a node too slow or a host busy past the longer
       window, a kubelet restarted or stopped, the engine gone; nothing is blamed on the
       kubelet, and running again may answer
  130  interrupted (Ctrl-C, SIGTERM, SIGHUP): what was measured is judged and kept"""


def verdict_exit(status: str, passed: bool) -> int:
    """The exit code of a check or a nightly from its status and whether it passed."""
    if status == "interrupted":
        return INTERRUPTED
    if passed:
        return 0
    return COULD_NOT_JUDGE if status == "error" else 1


OVERHEAD_CODES: Final = """exit codes:
  0    every cell measured: overhead.json, the table, plots and report in the run directory
  1    a kubelet restarted or stopped, or the engine went, during the sweep: its cells are
       kept with the run's reason, and evidence is gathered
  2    bad input (refused before anything is created), or set-up failed
  3    internal error: a bug of the harness (its traceback is printed), never a verdict
  130  interrupted: the cells measured so far are written
  (a cell that cannot be measured stops the sweep with 2; the cells before it are kept)"""

_SHOWN: Final = f"{PACE_SHOWN[0] - 1:+.0%} to {PACE_SHOWN[1] - 1:+.0%}"
COMPARE_CODES: Final = f"""exit codes:
  0    every talk figure of the second run is within {REPEAT_WITHIN:.0%} of what the first's and
       the machine's pace predict of it (the raw move is shown beside it)
  1    a figure moved more than that after the pace, one run did not measure it, either read
       it over a window short of the cap or among the kubelet's onset events, or the pace
       lies outside the range the account was shown over ({_SHOWN})
  (a worker the second run did not sweep at all is listed as not compared)
  2    a path that is not a sweep's run directory or overhead.json
  3    internal error: a bug of the harness (its traceback is printed), never a verdict"""

SETUP_CODES: Final = """exit codes:
  0    done
  2    bad input or a set-up error (the message names the fix)
  3    internal error: a bug of the harness (its traceback is printed), never a verdict
  130  interrupted"""

STATUS_CODES: Final = """exit codes:
  0    the cluster is up and every kubelet runs its profile's backoff config
  2    no such cluster, the engine is down, or a kubelet's live config differs from its profile
  3    internal error: a bug of the harness (its traceback is printed), never a verdict"""

KUBECONFIG_CODES: Final = """exit codes:
  0    the path printed
  2    no such cluster here, or the engine is down (the message names the fix)
  3    internal error: a bug of the harness (its traceback is printed), never a verdict"""

ENVIRONMENT: Final = """environment:
  CRASHLOOP_RUNS_DIR       where run directories go (default ./runs; --runs-dir sets it)
  CRASHLOOP_STATE_DIR      kubeconfigs, kind configs and patches (default
                           $XDG_STATE_HOME/crashloop-harness or ~/.local/state/crashloop-harness)
  CRASHLOOP_CACHE_DIR      build caches: Go, kind, node image parts (default
                           $XDG_CACHE_HOME/crashloop-harness or ~/.cache/crashloop-harness)
  CRASHLOOP_TIMEOUT_SCALE  multiply every timeout (a slow machine: 2)
  CRASHLOOP_DEBIAN_MIRROR  Debian mirror for the offline node image's rootfs"""
