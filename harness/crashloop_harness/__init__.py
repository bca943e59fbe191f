"""crashloop-harness: see, measure and check how the kubelet restarts crashing containers."""
