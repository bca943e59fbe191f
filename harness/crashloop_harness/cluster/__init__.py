"""Stage 2: one kind cluster, its kubeadm patches and its live kubelet configs."""
