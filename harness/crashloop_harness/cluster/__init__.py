"""One kind cluster or an existing one, and what a run asks of either (target.py: RunTarget)."""
