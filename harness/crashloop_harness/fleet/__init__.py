"""A fleet: every node pool of every cluster, grouped by the curve its kubelets really run."""
