// Command workload is the container the harness makes crash. It exits, runs
// for a while or sleeps, as told, and can append each start and exit to a file
// in a volume that outlives the container, so the pod keeps its own timeline
// of attempts next to the container runtime's.
//
// Every flag can also come from the environment (WORKLOAD_MODE,
// WORKLOAD_EXIT_CODE, WORKLOAD_RUN_FOR, WORKLOAD_RECORD_DIR, WORKLOAD_HISTORY) so a manifest can
// set it either way; a flag wins over the environment.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
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
	// The kubelet copies this file into lastState.terminated.message.
	terminationLog string
	// The container's name: its reports are kept in the record dir under it,
	// so each attempt's message also carries the attempts before it.
	history string
	// transient / ready-check
	failTimes int
	readyFile string
	// transient: fail only in a pod whose hostname ends with this (a
	// StatefulSet's ordinal, "-1"); elsewhere turn healthy at once.
	failHostSuffix string
	// retriable: the exit code once the --fail-times retriable exits are spent
	finalExitCode int
	// proxy / client
	listen    string
	target    string
	interval  time.Duration
	growMB    int
	growEvery time.Duration
	// server / probe-fork / init (the zombie scenario, zombies.go)
	noReap    bool     // as PID 1, leave inherited orphans unreaped
	asChild   bool     // run under init: the timeline and message are init's
	children  int      // probe-fork: children per probe
	childArgs []string // init: the server's arguments (after "--")
	// pace (pace.go)
	paceEvery      time.Duration
	paceIterations int
}

// readyPath is where transient marks itself healthy and ready-check looks:
// --ready-file, else the record dir, which both containers of a probe share.
func (cfg config) readyPath() string {
	if cfg.readyFile != "" {
		return cfg.readyFile
	}
	return filepath.Join(cfg.recordDir, "ready")
}

// A mode does its work and returns the exit code. ctx is cancelled by
// SIGTERM/SIGINT; sig then holds the signal. New modes only add an entry here.
type mode func(ctx context.Context, cfg config, sig *os.Signal) int

var modes = map[string]mode{
	// exit: crash at once, the bare conformance curve.
	"exit": func(_ context.Context, cfg config, _ *os.Signal) int { return cfg.exitCode },
	// run: a session that ends by itself (task isolation, transient failure).
	"run": runSession,
	// session: the task-isolation scenario's name for run (one unit of work,
	// then exit, usually 0, to be reset in place).
	"session": runSession,
	// sleep: a healthy container that stops cleanly when the kubelet asks.
	"sleep": func(ctx context.Context, _ config, _ *os.Signal) int {
		<-ctx.Done()
		return 0
	},
	// transient: fail --fail-times times, then serve healthy until stopped.
	"transient": transient,
	// run-once: crash at once, except attempt --fail-times+1, which works for
	// --run-for first (a long run that may reset the back-off curve).
	"run-once": runOnce,
	// retriable: exit --exit-code (a code a restart rule retries) on the
	// first --fail-times attempts, then --final-exit-code (one it does not).
	"retriable": retriable,
	// trigger: exit --exit-code (a crash) on every attempt but attempt
	// --fail-times+1, which exits --final-exit-code (a code a restart rule
	// acts on, such as RestartAllContainers).
	"trigger": trigger,
	// ready-check: an exec readiness probe (exit 0 iff the ready marker exists).
	"ready-check": readyCheck,
	// proxy: a sidecar that answers on --listen and leaks memory until killed.
	"proxy": proxy,
	// client: the main app, talking to --target and logging cut-offs.
	"client": client,
	// server: samples its zombies, tasks and forks; /healthz fails when it
	// cannot fork (with --no-reap as PID 1: a server that is not an init).
	"server": server,
	// init: PID 1 that reaps, running the server given after "--".
	"init": initMode,
	// probe-fork: the exec probe that forks --children and hangs till killed.
	"probe-fork": probeFork,
	// child: what the forks run, exit 0 at once.
	childMode: func(context.Context, config, *os.Signal) int { return 0 },
	// pace: a timed burst of CPU every --every, one line each (pace.go).
	"pace": paceMode,
}

// quietModes run often and briefly beside a workload (probes): they must not
// add start/exit lines to the workload's own timeline.
var quietModes = map[string]bool{"ready-check": true, "probe-fork": true, childMode: true}

func runSession(ctx context.Context, cfg config, sig *os.Signal) int {
	select {
	case <-time.After(cfg.runFor):
		return cfg.exitCode
	case <-ctx.Done():
		return signalExit(*sig)
	}
}

// transient counts its attempts in record-dir/transient.count (the emptyDir
// outlives restarts, so the count survives them). Attempts up to --fail-times
// work for --run-for and fail with --exit-code; the next one creates the ready
// marker and runs until SIGTERM, healthy.
func transient(ctx context.Context, cfg config, sig *os.Signal) int {
	count, ok := countAttempt(cfg, "transient")
	if !ok {
		return usageExit
	}
	if count <= cfg.failTimesHere() {
		// A stale marker would make a failing attempt look ready.
		_ = os.Remove(cfg.readyPath())
		if code := runSession(ctx, cfg, sig); code != cfg.exitCode {
			return code
		}
		fmt.Fprintf(os.Stderr, "workload: transient failure %d of %d\n", count, cfg.failTimesHere())
		return cfg.exitCode
	}
	if err := writeSynced(cfg.readyPath(), []byte(strconv.FormatInt(time.Now().UnixNano(), 10)+"\n"), os.O_TRUNC); err != nil {
		fmt.Fprintln(os.Stderr, "workload: ready marker:", err)
		return usageExit
	}
	go echoWhenWritten(ctx, cfg, readyProbeLog)
	<-ctx.Done()
	return 0
}

// failTimesHere is --fail-times, or 0 in a pod whose hostname does not end
// with --fail-host-suffix (every replica of a StatefulSet runs the same
// arguments; only the ordinal named fails).
func (cfg config) failTimesHere() int {
	if cfg.failHostSuffix == "" {
		return cfg.failTimes
	}
	host, err := os.Hostname()
	if err != nil || !strings.HasSuffix(host, cfg.failHostSuffix) {
		return 0
	}
	return cfg.failTimes
}

// retriable counts its attempts in record-dir/retriable.count like
// transient: attempts up to --fail-times work for --run-for and exit with
// --exit-code, every later one with --final-exit-code.
func retriable(ctx context.Context, cfg config, sig *os.Signal) int {
	count, ok := countAttempt(cfg, "retriable")
	if !ok {
		return usageExit
	}
	code := runSession(ctx, cfg, sig)
	if code != cfg.exitCode || count <= cfg.failTimes {
		return code
	}
	return cfg.finalExitCode
}

// trigger counts its attempts in record-dir/trigger.count like transient;
// each works for --run-for, then exits.
func trigger(ctx context.Context, cfg config, sig *os.Signal) int {
	count, ok := countAttempt(cfg, "trigger")
	if !ok {
		return usageExit
	}
	code := runSession(ctx, cfg, sig)
	if code == cfg.exitCode && count == cfg.failTimes+1 {
		return cfg.finalExitCode
	}
	return code
}

// runOnce counts its attempts in record-dir/run-once.count like transient,
// and exits with --exit-code: at once, except on attempt --fail-times+1,
// which runs for --run-for before it exits.
func runOnce(ctx context.Context, cfg config, sig *os.Signal) int {
	count, ok := countAttempt(cfg, "run-once")
	if !ok {
		return usageExit
	}
	if count == cfg.failTimes+1 {
		return runSession(ctx, cfg, sig)
	}
	return cfg.exitCode
}

// countAttempt numbers this attempt of mode in record-dir/<mode>.count (the
// emptyDir outlives restarts); false, with the reason on stderr, when it cannot.
func countAttempt(cfg config, mode string) (int, bool) {
	if cfg.recordDir == "" {
		fmt.Fprintf(os.Stderr, "workload: %s needs --record-dir for its attempt count\n", mode)
		return 0, false
	}
	count, err := bumpCounter(filepath.Join(cfg.recordDir, mode+".count"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "workload: attempt count:", err)
		return 0, false
	}
	return count, true
}

// bumpCounter increments the decimal count in path and returns the new value.
// Only one container of the pod runs transient at a time, so no lock is needed.
func bumpCounter(path string) (int, error) {
	count := 0
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if count, err = strconv.Atoi(string(data)); err != nil {
			return 0, fmt.Errorf("%s holds %q, not a count", path, data)
		}
	case !errors.Is(err, os.ErrNotExist):
		return 0, err
	}
	count++
	return count, writeSynced(path, []byte(strconv.Itoa(count)), os.O_TRUNC)
}

// readyCheck is run by the kubelet as an exec readiness probe. The first
// success also appends its own time to record-dir/ready-probe.log: the moment
// the kubelet learned the container is ready, in nanoseconds, where the pod
// status has whole seconds only.
const readyProbeLog = "ready-probe.log"

func readyCheck(_ context.Context, cfg config, _ *os.Signal) int {
	if _, err := os.Stat(cfg.readyPath()); err != nil {
		return 1
	}
	if cfg.recordDir != "" {
		line := fmt.Sprintf("{\"event\":\"ready\",\"unix_ns\":%d}\n", time.Now().UnixNano())
		// O_EXCL: only the first successful probe writes, later ones leave it.
		_ = writeSynced(filepath.Join(cfg.recordDir, readyProbeLog), []byte(line), os.O_EXCL)
	}
	return 0
}

// proxy answers every line on --listen with "pong", and every --grow-every
// allocates and touches --grow-mb more MiB that it never frees, so its memory
// limit OOM-kills it after a while of good service: the infrastructure kill
// of the talk's critical-sidecar scenario.
func proxy(ctx context.Context, cfg config, sig *os.Signal) int {
	listener, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "workload: listen:", err)
		return usageExit
	}
	go func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			go answer(conn)
		}
	}()
	var leak [][]byte
	ticker := time.NewTicker(cfg.growEvery)
	defer ticker.Stop()
	for {
		select {
		case <-ticker.C:
			if cfg.growMB > 0 {
				chunk := make([]byte, cfg.growMB<<20)
				// Touch every page: untouched pages are not charged to the cgroup.
				for i := 0; i < len(chunk); i += 4096 {
					chunk[i] = 1
				}
				leak = append(leak, chunk)
			}
		case <-ctx.Done():
			_ = listener.Close()
			return signalExit(*sig)
		}
	}
}

func answer(conn net.Conn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(requestTimeout))
	reader := bufio.NewReader(conn)
	for {
		if _, err := reader.ReadString('\n'); err != nil {
			return
		}
		if _, err := conn.Write([]byte("pong\n")); err != nil {
			return
		}
	}
}

// requestTimeout bounds one client request (dial, send, answer). The proxy
// answers in well under a millisecond; a second without an answer is a cut.
const requestTimeout = time.Second

// client asks --target every --interval and appends to record-dir/client.log
// the first answer ("connected") and every change: "cut" when a request
// fails after one succeeded, "restored" when one succeeds after a cut. It
// never exits by itself: the app is healthy, only its sidecar is not.
func client(ctx context.Context, cfg config, sig *os.Signal) int {
	connected, cut := false, false
	ticker := time.NewTicker(cfg.interval)
	defer ticker.Stop()
	for {
		ok := ping(cfg.target)
		event := ""
		switch {
		case ok && !connected:
			connected, event = true, "connected"
		case ok && cut:
			cut, event = false, "restored"
		case !ok && connected && !cut:
			cut, event = true, "cut"
		}
		if event != "" {
			if err := appendEvent(cfg, "client.log", event); err != nil {
				fmt.Fprintln(os.Stderr, "workload: client log:", err)
			}
		}
		select {
		case <-ticker.C:
		case <-ctx.Done():
			return signalExit(*sig)
		}
	}
}

func ping(target string) bool {
	conn, err := net.DialTimeout("tcp", target, requestTimeout)
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(requestTimeout))
	if _, err := conn.Write([]byte("ping\n")); err != nil {
		return false
	}
	reply, err := bufio.NewReader(conn).ReadString('\n')
	return err == nil && reply == "pong\n"
}

type clientEvent struct {
	Event  string `json:"event"`
	UnixNs int64  `json:"unix_ns"`
}

func appendEvent(cfg config, file, name string) error {
	if cfg.recordDir == "" {
		return nil
	}
	now := time.Now().UnixNano()
	echo(file, clientEvent{name, now})
	line, _ := json.Marshal(clientEvent{name, now})
	return writeSynced(filepath.Join(cfg.recordDir, file), append(line, '\n'), os.O_APPEND)
}

// echoedEvent is a line of a record file repeated on stdout, named by its
// file: a reader with the API alone (pods/log) sees what the emptyDir holds.
type echoedEvent struct {
	File   string `json:"file"`
	Event  string `json:"event"`
	UnixNs int64  `json:"unix_ns"`
}

func echo(file string, e clientEvent) {
	line, _ := json.Marshal(echoedEvent{file, e.Event, e.UnixNs})
	fmt.Println(string(line))
}

// echoWhenWritten repeats record-dir/file on stdout once it holds an event
// (written by another process, such as the readiness probe), until ctx ends.
func echoWhenWritten(ctx context.Context, cfg config, file string) {
	ticker := time.NewTicker(echoPoll)
	defer ticker.Stop()
	for {
		if data, err := os.ReadFile(filepath.Join(cfg.recordDir, file)); err == nil {
			var e clientEvent
			if json.Unmarshal([]byte(strings.TrimSpace(string(data))), &e) == nil && e.Event != "" {
				echo(file, e)
				return
			}
		}
		select {
		case <-ticker.C:
		case <-ctx.Done():
			return
		}
	}
}

// echoPoll bounds how late a probe's event reaches stdout; its time is its own.
const echoPoll = 50 * time.Millisecond

// writeSynced writes data with extra open flags (O_APPEND, O_TRUNC, O_EXCL)
// and fsyncs it: the emptyDir must hold it even if the process dies next.
func writeSynced(path string, data []byte, flags int) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|flags, 0o644)
	if err != nil {
		return err
	}
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
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
	if cfg.recordDir == "" || cfg.asChild {
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

// selfReport is the termination message: this attempt's process start and
// exit on the node's clock. The kubelet copies it into the pod status
// (lastState.terminated.message), so a reader with nothing but the API learns
// every attempt's times to the nanosecond rather than the status's seconds.
type selfReport struct {
	Version  int   `json:"v"`
	StartNs  int64 `json:"start_ns"`
	ExitNs   int64 `json:"exit_ns"`
	ExitCode int   `json:"exit_code"`
}

// aliveReport stands in the termination message while the process runs: a
// process killed without warning (OOMKilled, SIGKILL) cannot write its exit,
// so the last heartbeat bounds it from below, to within heartbeatEvery.
type aliveReport struct {
	Version int   `json:"v"`
	StartNs int64 `json:"start_ns"`
	AliveNs int64 `json:"alive_ns"`
}

// history is what an attempt knows of the ones before it. The pod status
// shows only the newest ended attempt: when two end between two status
// updates (a probe kill loop restarts within a second), the first is never
// shown, and a reader with nothing but the API would lose it. Each message
// therefore also carries this attempt's number (counted in the record dir,
// from 0, like the kubelet's restartCount) and the last reports of the
// attempts before it, newest first (null where one left none).
type history struct {
	Attempt int               `json:"attempt"`
	Earlier []json.RawMessage `json:"earlier"`
}

// savedHistory is DIR/NAME.history: how many attempts started before, and
// their reports as the next message carries them.
type savedHistory struct {
	Attempts int               `json:"attempts"`
	Earlier  []json.RawMessage `json:"earlier"`
}

const (
	// heartbeatEvery is the precision of a killed attempt's exit time.
	heartbeatEvery = 100 * time.Millisecond
	// reportWidth pads every report to one length. Each is written over the
	// last at offset 0, never truncating first, so the kubelet reading the
	// file whenever the process dies finds one whole report (JSON allows the
	// trailing spaces). A history widens it by its own length.
	reportWidth = 120
	// keptEarlier is how many earlier attempts each message carries: enough
	// for the statuses of that many attempts in a row never to be shown.
	keptEarlier = 3
)

// reporter keeps the termination message current: the start at once, a
// heartbeat while the attempt lives, the exit last. With a history it keeps
// the same reports, without the history, in the record dir for the next
// attempt.
type reporter struct {
	mu      sync.Mutex
	file    *os.File // nil outside a pod: nothing is written
	own     *os.File // DIR/NAME.report: this attempt's report for the next one (nil: none)
	startNs int64
	past    []byte // `,"attempt":N,"earlier":[...]` appended to each message (nil: none)
	width   int
	exited  bool
}

func openReporter(path string, startNs int64) *reporter {
	return openReporterWithHistory(path, startNs, "", "")
}

// openReporterWithHistory is openReporter that also numbers the attempt and
// carries the earlier ones, kept in dir under name (both empty: no history).
func openReporterWithHistory(path string, startNs int64, dir, name string) *reporter {
	r := &reporter{startNs: startNs, width: reportWidth}
	if path == "" {
		return r
	}
	if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
		r.file = f
	}
	if r.file != nil && dir != "" && name != "" {
		r.past, r.own = takeHistory(filepath.Join(dir, name))
		r.width += len(r.past)
	}
	r.alive()
	return r
}

// takeHistory numbers this attempt from base.history, adds the last report
// the attempt before left in base.report, writes the history the next
// attempt will read, and opens base.report for this attempt's own. Any file
// it cannot read or write leaves this attempt without a history: a wrong
// number would be worse than none.
func takeHistory(base string) ([]byte, *os.File) {
	var kept savedHistory
	if data, err := os.ReadFile(base + ".history"); err == nil {
		if json.Unmarshal(data, &kept) != nil || kept.Attempts < 0 {
			return nil, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	earlier := kept.Earlier
	if kept.Attempts > 0 {
		last := json.RawMessage("null")
		if data, err := os.ReadFile(base + ".report"); err == nil && json.Valid(data) {
			last = json.RawMessage(strings.TrimSpace(string(data)))
		}
		earlier = append([]json.RawMessage{last}, earlier...)
	}
	if len(earlier) > keptEarlier {
		earlier = earlier[:keptEarlier]
	}
	if earlier == nil {
		earlier = []json.RawMessage{}
	}
	next, _ := json.Marshal(savedHistory{kept.Attempts + 1, earlier})
	// Written whole, then renamed over the old one: a crash in between leaves
	// the old history, never half of one.
	if writeSynced(base+".history.new", next, os.O_TRUNC) != nil ||
		os.Rename(base+".history.new", base+".history") != nil {
		return nil, nil
	}
	own, err := os.OpenFile(base+".report", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, nil
	}
	past, _ := json.Marshal(history{kept.Attempts, earlier})
	// The object's fields, to follow the report's own inside its braces.
	return append([]byte{','}, past[1:len(past)-1]...), own
}

func (r *reporter) write(report any) {
	if r.file == nil {
		return
	}
	line, _ := json.Marshal(report)
	if r.own != nil {
		_, _ = r.own.WriteAt(padded(line, reportWidth), 0)
	}
	if r.past != nil {
		line = append(line[:len(line)-1:len(line)-1], append(r.past, '}')...)
	}
	_, _ = r.file.WriteAt(padded(line, r.width), 0)
}

func padded(line []byte, width int) []byte {
	if len(line) < width {
		line = append(line, strings.Repeat(" ", width-len(line))...)
	}
	return line
}

func (r *reporter) alive() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.exited {
		r.write(aliveReport{1, r.startNs, time.Now().UnixNano()})
	}
}

// heartbeat refreshes the report until the attempt ends.
func (r *reporter) heartbeat(ctx context.Context) {
	if r.file == nil {
		return
	}
	ticker := time.NewTicker(heartbeatEvery)
	defer ticker.Stop()
	for {
		select {
		case <-ticker.C:
			r.alive()
		case <-ctx.Done():
			return
		}
	}
}

// exit writes the final report; no heartbeat follows it.
func (r *reporter) exit(code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.exited = true
	r.write(selfReport{1, r.startNs, time.Now().UnixNano(), code})
	for _, f := range []*os.File{r.file, r.own} {
		if f != nil {
			_ = f.Close()
		}
	}
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
	fs.StringVar(&cfg.mode, "mode", envOr("WORKLOAD_MODE", "exit"), "exit | run | session | sleep | transient | run-once | retriable | trigger | ready-check | proxy | client | server | init | probe-fork | child | pace")
	code := fs.String("exit-code", envOr("WORKLOAD_EXIT_CODE", "1"), "exit code of exit and run")
	runFor := fs.String("run-for", envOr("WORKLOAD_RUN_FOR", "0s"), "how long run works (Go duration)")
	fs.StringVar(&cfg.recordDir, "record-dir", envOr("WORKLOAD_RECORD_DIR", ""), "append events to DIR/attempts.log")
	fs.StringVar(&cfg.history, "history", envOr("WORKLOAD_HISTORY", ""), "keep this container's reports in DIR/NAME.report and DIR/NAME.history, so each termination message carries the attempts before it (needs --record-dir)")
	fs.StringVar(&cfg.terminationLog, "termination-log", envOr("WORKLOAD_TERMINATION_LOG", "/dev/termination-log"), "keep this attempt's start, heartbeat and exit times here, the termination message (empty: nowhere)")
	fs.IntVar(&cfg.failTimes, "fail-times", 3, "transient: attempts that fail before it turns healthy; run-once: quick attempts before the long one")
	fs.StringVar(&cfg.readyFile, "ready-file", "", "transient, ready-check: the ready marker (default DIR/ready)")
	fs.StringVar(&cfg.failHostSuffix, "fail-host-suffix", "", "transient: fail only where the hostname ends with this")
	finalCode := fs.String("final-exit-code", "1", "retriable: the exit code after the --fail-times retriable ones; trigger: attempt --fail-times+1's")
	fs.StringVar(&cfg.listen, "listen", "127.0.0.1:8080", "proxy: address to serve on")
	fs.StringVar(&cfg.target, "target", "127.0.0.1:8080", "client: address to talk to")
	fs.DurationVar(&cfg.interval, "interval", 100*time.Millisecond, "client: time between requests")
	fs.IntVar(&cfg.growMB, "grow-mb", 0, "proxy: MiB to allocate and keep every --grow-every")
	fs.DurationVar(&cfg.growEvery, "grow-every", time.Second, "proxy: how often to grow")
	fs.BoolVar(&cfg.noReap, "no-reap", false, "as PID 1, leave the orphans it inherits unreaped (zombies)")
	fs.BoolVar(&cfg.asChild, "as-child", false, "run under init: record no start or exit, keep no termination message")
	fs.IntVar(&cfg.children, "children", 1, "probe-fork: children to fork per probe")
	fs.DurationVar(&cfg.paceEvery, "every", 5*time.Second, "pace: time between bursts")
	fs.IntVar(&cfg.paceIterations, "iterations", 1_000_000, "pace: rounds of each burst (a few ms on the reference host)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	cfg.childArgs = fs.Args()
	if cfg.mode == "init" && len(cfg.childArgs) == 0 {
		return cfg, fmt.Errorf("--mode init: give the server's arguments after --")
	}
	if cfg.children < 0 {
		return cfg, fmt.Errorf("--children must not be negative")
	}
	if cfg.asChild {
		cfg.terminationLog, cfg.history = "", ""
	}
	if cfg.interval <= 0 || cfg.growEvery <= 0 || cfg.paceEvery <= 0 {
		return cfg, fmt.Errorf("--interval, --grow-every and --every must be positive")
	}
	if cfg.paceIterations < 1 {
		return cfg, fmt.Errorf("--iterations must be at least 1")
	}
	if cfg.failTimes < 0 || cfg.growMB < 0 {
		return cfg, fmt.Errorf("--fail-times and --grow-mb must not be negative")
	}
	var err error
	if cfg.exitCode, err = strconv.Atoi(*code); err != nil || cfg.exitCode < 0 || cfg.exitCode > 255 {
		return cfg, fmt.Errorf("--exit-code %q: want an integer 0..255", *code)
	}
	if cfg.finalExitCode, err = strconv.Atoi(*finalCode); err != nil || cfg.finalExitCode < 0 || cfg.finalExitCode > 255 {
		return cfg, fmt.Errorf("--final-exit-code %q: want an integer 0..255", *finalCode)
	}
	if cfg.runFor, err = time.ParseDuration(*runFor); err != nil || cfg.runFor < 0 {
		return cfg, fmt.Errorf("--run-for %q: want a Go duration such as 30s", *runFor)
	}
	if _, ok := modes[cfg.mode]; !ok {
		return cfg, fmt.Errorf("--mode %q: want one of %s", cfg.mode, modeNames())
	}
	return cfg, nil
}

func modeNames() string {
	names := make([]string, 0, len(modes))
	for name := range modes {
		names = append(names, name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func main() {
	cfg, err := parseConfig(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "workload:", err)
		os.Exit(usageExit)
	}
	if quietModes[cfg.mode] {
		os.Exit(modes[cfg.mode](context.Background(), cfg, nil))
	}
	// init reaps in its own loop; --no-reap is the server that does not.
	if os.Getpid() == 1 && !cfg.noReap && cfg.mode != "init" {
		go reapChildren()
	}
	// Notify before recording "start" so no signal falls between the two.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	ctx, cancel := context.WithCancel(context.Background())
	var got os.Signal
	go func() { got = <-signals; cancel() }()

	report := openReporterWithHistory(cfg.terminationLog, time.Now().UnixNano(), cfg.recordDir, cfg.history)
	beating, stopBeating := context.WithCancel(context.Background())
	go report.heartbeat(beating)
	if err := record(cfg, "start", nil); err != nil {
		fmt.Fprintln(os.Stderr, "workload: record start:", err)
		os.Exit(usageExit)
	}
	code := modes[cfg.mode](ctx, cfg, &got)
	if err := record(cfg, "exit", &code); err != nil {
		fmt.Fprintln(os.Stderr, "workload: record exit:", err)
	}
	stopBeating()
	report.exit(code)
	os.Exit(code)
}
