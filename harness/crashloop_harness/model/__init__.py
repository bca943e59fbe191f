"""Pure: durations and the kubelet's back-off curve."""
