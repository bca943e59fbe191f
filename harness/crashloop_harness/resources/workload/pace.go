package main

import (
	"context"
	"fmt"
	"os"
	"time"
)

// The pace mode: a fixed burst of CPU every --every, each timed on the node's
// clock and printed as one line, "pace <start unix ns> <duration ns>", until the
// kubelet stops the container. A restart's work is small bursts of CPU; the
// burst's time against the reference host's is how much slower the node does
// such work right now. It runs in a pod of its own beside the subjects, for a
// target reached through the API alone (no command runs in its nodes): no
// kubelet code is between the two clock readings, so the kubelet under test
// cannot move what it measures.

// burstSink keeps the burst's result alive, so the compiler cannot drop the loop.
var burstSink uint64

// burst runs n rounds of xorshift: pure CPU, no memory traffic, no system call.
func burst(n int) uint64 {
	x := uint64(88172645463325252)
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// timeBurst runs one burst and says when it began and how long it took.
func timeBurst(n int) (time.Time, time.Duration) {
	start := time.Now()
	burstSink ^= burst(n)
	return start, time.Since(start)
}

func paceMode(ctx context.Context, cfg config, _ *os.Signal) int {
	tick := time.NewTicker(cfg.paceEvery)
	defer tick.Stop()
	for {
		start, took := timeBurst(cfg.paceIterations)
		fmt.Fprintf(os.Stdout, "pace %d %d\n", start.UnixNano(), took.Nanoseconds())
		select {
		case <-ctx.Done():
			return 0
		case <-tick.C:
		}
	}
}
