"""The overhead analysis of the talk (slides 12-13), all of it: the plan, the sweep, its
waits and node readings, the costs and ratios, the pace between sweeps, its outputs."""
