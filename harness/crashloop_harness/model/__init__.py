"""Stage 3, pure: durations and the kubelet's back-off curve."""
