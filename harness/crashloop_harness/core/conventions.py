"""Every label and annotation the harness writes or reads, in one table.

Two families: the ``crashloop.harness/`` keys the harness puts on its nodes, pods and
node images (so it can find its own work again, and leave a user's alone), and the
``io.kubernetes.`` labels the kubelet puts on every container it asks the runtime for
(the recorders read them to tell whose container a runtime event is).
"""

from typing import Final

_HARNESS: Final = "crashloop.harness/"

# --- on nodes (kind config) ------------------------------------------------------------------
# The worker a node plays and the kubelet profile it runs.
WORKER_LABEL: Final = _HARNESS + "worker"
PROFILE_LABEL: Final = _HARNESS + "profile"
# A digest of the kubelet config a node was made with: a spec changed since is seen.
CONFIG_HASH_LABEL: Final = _HARNESS + "config-hash"
# Label values are limited to 63 characters; 16 hex digits (64 bits) are
# plenty to tell configs apart.
CONFIG_HASH_LABEL_LENGTH: Final = 16

# --- on pods and run namespaces ------------------------------------------------------------
# The run a pod or namespace belongs to, and a pod's part in it (a scenario's name, ...).
RUN_LABEL: Final = _HARNESS + "run"
ROLE_LABEL: Final = _HARNESS + "role"
# Which process made a run's namespace: a leftover can be told from a run still going.
OWNER_ANNOTATION: Final = _HARNESS + "owner"
# The overhead sweep's pods whose restarts are sampled (the rest only fill the node).
SAMPLED_LABEL: Final = _HARNESS + "sampled"

# --- on node images ------------------------------------------------------------------------
# The Kubernetes release an image was built from, and a digest of every input to its build.
KUBERNETES_VERSION_LABEL: Final = _HARNESS + "kubernetes-version"
INPUTS_LABEL: Final = _HARNESS + "inputs"

# --- set by the kubelet on every container (read from the runtime) --------------------------
POD_NAME_LABEL: Final = "io.kubernetes.pod.name"
POD_NAMESPACE_LABEL: Final = "io.kubernetes.pod.namespace"
POD_UID_LABEL: Final = "io.kubernetes.pod.uid"
CONTAINER_NAME_LABEL: Final = "io.kubernetes.container.name"
RESTART_COUNT_ANNOTATION: Final = "io.kubernetes.container.restartCount"

# A bundle of the kubelets' serving CAs, trusted beside the cluster's when a check in a pod
# reads the kubelets directly (crashloop_harness.cluster.kubeletapi; the nightly sets it).
KUBELET_CA_VARIABLE: Final = "CRASHLOOP_KUBELET_CA"

# "stdout": the CLI's progress on stdout with its results, one stream whose order a
# container's log keeps (the nightly's pod sets it; crashloop_harness.cli.common).
PROGRESS_VARIABLE: Final = "CRASHLOOP_PROGRESS"
