package main

// The zombie scenario's modes: a server that, as PID 1, does not reap the
// orphans it inherits (--no-reap), an init that does (tini's job), and the
// exec probe whose children become those orphans when the kubelet kills it.
//
// The server samples its PID namespace every --interval: how many processes
// are zombies, how many tasks (threads) the namespace holds, and whether it
// can still fork a process that runs. Each sample is a line of
// record-dir/zombies.log (also echoed on stdout), and /healthz answers 503
// from the first failed fork on: the liveness probe of a server that cannot
// fork. It stays failed: near the limit a fork fails or not as probes come
// and go, and a liveness probe of three failures in a row would wait out the
// flapping (run 20261206T161836Z-scenarios-03ec: 47 s after the first).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	zombiesLog = "zombies.log"
	probesLog  = "probes.log"
	// childMode is what every fork of these modes runs: exit 0 at once.
	childMode = "child"
	// forkWait bounds how long the server waits for its fork-check child.
	forkWait = 5 * time.Second
	// warmThreads is how many idle OS threads the server makes at its start:
	// the Go runtime wants a thread now and then, and one it cannot create
	// is fatal. Idle threads are kept and reused, so a full PID limit stops
	// the server's forks, not the server.
	warmThreads = 3
)

// Fork-check outcomes, as zombies.log names them.
const (
	forkOK     = "ok"
	forkFailed = "failed"       // fork itself refused (EAGAIN at the PID limit)
	childDied  = "child-failed" // forked, but the child could not run (its threads refused)
)

// sample is one line of zombies.log.
type sample struct {
	Event   string `json:"event"`
	UnixNs  int64  `json:"unix_ns"`
	Zombies int    `json:"zombies"`
	Tasks   int    `json:"tasks"`
	Fork    string `json:"fork"`
	Errno   string `json:"errno,omitempty"`
	Pid     int    `json:"pid"`
}

// countProcs counts the processes under procRoot (a /proc) in state Z, and
// every task (thread) of every process: what the pids cgroup counts. A
// zombie keeps one task, its thread group leader.
func countProcs(procRoot string) (zombies, tasks int) {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return 0, 0
	}
	for _, entry := range entries {
		if _, err := strconv.Atoi(entry.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(procRoot, entry.Name(), "stat"))
		if err != nil {
			continue // it ended between the listing and the read
		}
		if procState(stat) == 'Z' {
			zombies++
		}
		if threads, err := os.ReadDir(filepath.Join(procRoot, entry.Name(), "task")); err == nil && len(threads) > 0 {
			tasks += len(threads)
		} else {
			tasks++
		}
	}
	return zombies, tasks
}

// procState is the state letter of a /proc/PID/stat line: the field after
// the command, which is in parentheses and may itself hold ") ".
func procState(stat []byte) byte {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return 0
	}
	return stat[i+2]
}

// forkChild starts this binary in childMode with /dev/null for its stdio (an
// exec probe's output pipes must not be held open by an orphan).
func forkChild() (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer devnull.Close()
	fd := devnull.Fd()
	return syscall.ForkExec(self, []string{self, "--mode", childMode}, &syscall.ProcAttr{
		Files: []uintptr{fd, fd, fd},
	})
}

// forkCheck forks a child and waits for it (its own child: a server that does
// not reap orphans still waits for what it forks itself, as Redis waits for
// its BGSAVE). The wait polls, so no thread is parked in wait4.
func forkCheck() (string, string) {
	pid, err := forkChild()
	if err != nil {
		var errno syscall.Errno
		if errors.As(err, &errno) {
			return forkFailed, errno.Error()
		}
		return forkFailed, err.Error()
	}
	deadline := time.Now().Add(forkWait)
	for time.Now().Before(deadline) {
		var status syscall.WaitStatus
		got, err := syscall.Wait4(pid, &status, syscall.WNOHANG, nil)
		if err != nil && err != syscall.EINTR {
			return childDied, err.Error()
		}
		if got == pid {
			if status.Exited() && status.ExitStatus() == 0 {
				return forkOK, ""
			}
			return childDied, fmt.Sprintf("child status %#x", uint32(status))
		}
		time.Sleep(5 * time.Millisecond)
	}
	return childDied, "child still running after " + forkWait.String()
}

// warm makes n idle OS threads: goroutines locked to threads at once force
// the runtime to make one each, and it keeps them once they are unlocked.
func warm(n int) {
	done := make(chan struct{})
	for i := 0; i < n; i++ {
		go func() {
			runtime.LockOSThread()
			<-done
			runtime.UnlockOSThread()
		}()
	}
	time.Sleep(50 * time.Millisecond)
	close(done)
}

// healthHandler answers 200 until a fork check failed, 503 from then on.
func healthHandler(healthy *atomic.Bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if healthy.Load() {
			_, _ = w.Write([]byte("ok\n"))
			return
		}
		http.Error(w, "cannot fork", http.StatusServiceUnavailable)
	})
}

// noteFork turns the server unhealthy at a failed fork, for good.
func noteFork(healthy *atomic.Bool, fork string) {
	if fork != forkOK {
		healthy.Store(false)
	}
}

// server samples its PID namespace and forks every --interval, and serves
// /healthz on --listen, until stopped.
func server(ctx context.Context, cfg config, sig *os.Signal) int {
	warm(warmThreads)
	listener, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "workload: listen:", err)
		return usageExit
	}
	var healthy atomic.Bool
	healthy.Store(true)
	mux := http.NewServeMux()
	mux.Handle("/healthz", healthHandler(&healthy))
	go func() { _ = http.Serve(listener, mux) }()
	ticker := time.NewTicker(cfg.interval)
	defer ticker.Stop()
	for {
		fork, errno := forkCheck()
		noteFork(&healthy, fork)
		zombies, tasks := countProcs("/proc")
		s := sample{"sample", time.Now().UnixNano(), zombies, tasks, fork, errno, os.Getpid()}
		if err := appendLine(cfg, zombiesLog, s); err != nil {
			fmt.Fprintln(os.Stderr, "workload: zombies log:", err)
		}
		select {
		case <-ticker.C:
		case <-ctx.Done():
			_ = listener.Close()
			return signalExit(*sig)
		}
	}
}

// appendLine appends v as a JSON line to record-dir/file and echoes it on
// stdout with the file's name, as appendEvent does for plain events.
func appendLine(cfg config, file string, v any) error {
	line, _ := json.Marshal(v)
	echoed, _ := json.Marshal(map[string]json.RawMessage{"file": json.RawMessage(strconv.Quote(file)), "line": line})
	fmt.Println(string(echoed))
	if cfg.recordDir == "" {
		return nil
	}
	return writeSynced(filepath.Join(cfg.recordDir, file), append(line, '\n'), os.O_APPEND)
}

// probeFork is the exec probe that makes zombies: it notes its start in
// record-dir/probes.log, forks --children children that exit at once, and
// then hangs for --run-for. The kubelet kills it at its timeoutSeconds; its
// children, already zombies, pass to PID 1, which reaps them or not.
func probeFork(_ context.Context, cfg config, _ *os.Signal) int {
	if cfg.recordDir != "" {
		line, _ := json.Marshal(clientEvent{"probe", time.Now().UnixNano()})
		_ = writeSynced(filepath.Join(cfg.recordDir, probesLog), append(line, '\n'), os.O_APPEND)
	}
	code := 0
	for i := 0; i < cfg.children; i++ {
		if _, err := forkChild(); err != nil {
			code = 1
		}
	}
	time.Sleep(cfg.runFor)
	return code
}

// initMode is PID 1 that reaps: it starts this binary with the arguments
// after "--" (the server, told --as-child), passes SIGTERM/SIGINT on to it,
// reaps every child the namespace gives it, and exits as the server did.
func initMode(ctx context.Context, cfg config, _ *os.Signal) int {
	children := make(chan os.Signal, 1)
	signal.Notify(children, syscall.SIGCHLD)
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "workload: init:", err)
		return usageExit
	}
	pid, err := syscall.ForkExec(self, append([]string{self}, cfg.childArgs...), &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "workload: init: start", cfg.childArgs, ":", err)
		return usageExit
	}
	stop := ctx.Done()
	for {
		select {
		case <-children:
			if code, done := reapAll(pid); done {
				return code
			}
		case <-stop:
			_ = syscall.Kill(pid, syscall.SIGTERM)
			stop = nil
		}
	}
}

// reapAll reaps every child that has ended; done with its exit code once
// one of them was main.
func reapAll(main int) (int, bool) {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return 0, false
		}
		if pid == main {
			return exitCodeOf(status), true
		}
	}
}

// exitCodeOf follows the shell: the exit status, or 128+n for a signal.
func exitCodeOf(status syscall.WaitStatus) int {
	if status.Signaled() {
		return 128 + int(status.Signal())
	}
	return status.ExitStatus()
}
