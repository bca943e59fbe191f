// Command workload is the container the harness makes crash. It exits, runs
// for a while or sleeps, as told, and can append each start and exit to a file
// in a volume that outlives the container, so the pod keeps its own timeline
// of attempts next to the container runtime's.
//
// Every flag can also come from the environment (WORKLOAD_MODE,
// WORKLOAD_EXIT_CODE, WORKLOAD_RUN_FOR, WORKLOAD_RECORD_DIR) so a manifest can
// set it either way; a flag wins over the environment.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// usageExit matches flag parsing: a bad invocation (or a timeline that cannot
// be written) is not the crash the harness asked for, and must stand out.
const usageExit = 2

type config struct {
	mode      string
	exitCode  int
	runFor    time.Duration
	recordDir string
}

// A mode does its work and returns the exit code. ctx is cancelled by
// SIGTERM/SIGINT; sig then holds the signal. New modes only add an entry here.
type mode func(ctx context.Context, cfg config, sig *os.Signal) int

var modes = map[string]mode{
	// exit: crash at once, the bare conformance curve.
	"exit": func(_ context.Context, cfg config, _ *os.Signal) int { return cfg.exitCode },
	// run: a session that ends by itself (task isolation, transient failure).
	"run": func(ctx context.Context, cfg config, sig *os.Signal) int {
		select {
		case <-time.After(cfg.runFor):
			return cfg.exitCode
		case <-ctx.Done():
			return signalExit(*sig)
		}
	},
	// sleep: a healthy container that stops cleanly when the kubelet asks.
	"sleep": func(ctx context.Context, _ config, _ *os.Signal) int {
		<-ctx.Done()
		return 0
	},
}

// signalExit follows the shell convention 128+n (143 for SIGTERM, 130 for
// SIGINT), which is also what the runtime reports for a signalled process.
func signalExit(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 1
}

type event struct {
	Event    string `json:"event"`
	UnixNs   int64  `json:"unix_ns"`
	Pid      int    `json:"pid"`
	Hostname string `json:"hostname"`
	Mode     string `json:"mode"`
	ExitCode *int   `json:"exit_code,omitempty"` // only meaningful on "exit"
}

// record appends one event and fsyncs it: the line must be on disk before the
// process exits, or a crash loop would lose exactly the events it measures.
func record(cfg config, name string, exitCode *int) error {
	if cfg.recordDir == "" {
		return nil
	}
	host, _ := os.Hostname() // an empty hostname still leaves a usable line
	// Marshal cannot fail on a struct of plain fields.
	line, _ := json.Marshal(event{name, time.Now().UnixNano(), os.Getpid(), host, cfg.mode, exitCode})
	f, err := os.OpenFile(filepath.Join(cfg.recordDir, "attempts.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	// One write per line keeps concurrent appenders from interleaving.
	if _, err = f.Write(append(line, '\n')); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// reapChildren collects orphans re-parented to us. As PID 1 of the container
// nobody else will, and zombies (from `kubectl exec` for example) pile up.
func reapChildren() {
	children := make(chan os.Signal, 1)
	signal.Notify(children, syscall.SIGCHLD)
	for range children {
		for {
			var status syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}

func envOr(name, fallback string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return fallback
}

func parseConfig(args []string) (config, error) {
	fs := flag.NewFlagSet("workload", flag.ContinueOnError)
	var cfg config
	fs.StringVar(&cfg.mode, "mode", envOr("WORKLOAD_MODE", "exit"), "exit | run | sleep")
	code := fs.String("exit-code", envOr("WORKLOAD_EXIT_CODE", "1"), "exit code of exit and run")
	runFor := fs.String("run-for", envOr("WORKLOAD_RUN_FOR", "0s"), "how long run works (Go duration)")
	fs.StringVar(&cfg.recordDir, "record-dir", envOr("WORKLOAD_RECORD_DIR", ""), "append events to DIR/attempts.log")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	var err error
	if cfg.exitCode, err = strconv.Atoi(*code); err != nil || cfg.exitCode < 0 || cfg.exitCode > 255 {
		return cfg, fmt.Errorf("--exit-code %q: want an integer 0..255", *code)
	}
	if cfg.runFor, err = time.ParseDuration(*runFor); err != nil || cfg.runFor < 0 {
		return cfg, fmt.Errorf("--run-for %q: want a Go duration such as 30s", *runFor)
	}
	if _, ok := modes[cfg.mode]; !ok {
		return cfg, fmt.Errorf("--mode %q: want exit, run or sleep", cfg.mode)
	}
	return cfg, nil
}

func main() {
	cfg, err := parseConfig(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "workload:", err)
		os.Exit(usageExit)
	}
	if os.Getpid() == 1 {
		go reapChildren()
	}
	// Notify before recording "start" so no signal falls between the two.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	ctx, cancel := context.WithCancel(context.Background())
	var got os.Signal
	go func() { got = <-signals; cancel() }()

	if err := record(cfg, "start", nil); err != nil {
		fmt.Fprintln(os.Stderr, "workload: record start:", err)
		os.Exit(usageExit)
	}
	code := modes[cfg.mode](ctx, cfg, &got)
	if err := record(cfg, "exit", &code); err != nil {
		fmt.Fprintln(os.Stderr, "workload: record exit:", err)
	}
	os.Exit(code)
}
