package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary be the workload: the modes that fork run
// os.Executable(), which in a test is this binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "--mode" {
		main()
		return
	}
	os.Exit(m.Run())
}

func writeProc(t *testing.T, root, pid, stat string, threads int) {
	t.Helper()
	dir := filepath.Join(root, pid)
	for i := 0; i < threads; i++ {
		if err := os.MkdirAll(filepath.Join(dir, "task", pid+"-"+string(rune('a'+i))), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCountProcsCountsZombiesAndEveryTask(t *testing.T) {
	root := t.TempDir()
	writeProc(t, root, "1", "1 (workload) S 0 1 1 0", 5)
	writeProc(t, root, "7", "7 (a) Z (b) S 1 7", 1) // a name holding ") Z (" must not fool it
	writeProc(t, root, "8", "8 (workload) Z 1 8", 1)
	writeProc(t, root, "9", "9 (workload) Z 1 9", 0) // no task dir: still one task
	if err := os.MkdirAll(filepath.Join(root, "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	zombies, tasks := countProcs(root)
	if zombies != 2 || tasks != 8 {
		t.Fatalf("got %d zombies, %d tasks; want 2 zombies, 8 tasks", zombies, tasks)
	}
}

func TestProcStateOfAShortLineIsNone(t *testing.T) {
	if got := procState([]byte("1 (x)")); got != 0 {
		t.Fatalf("state %q, want none", got)
	}
}

func TestHealthFailsFromTheFirstFailedForkOn(t *testing.T) {
	var healthy atomic.Bool
	healthy.Store(true)
	handler := healthHandler(&healthy)
	get := func() int {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
		return rec.Code
	}
	if code := get(); code != http.StatusOK {
		t.Fatalf("healthz %d before any failure, want 200", code)
	}
	for _, fork := range []string{forkOK, childDied, forkOK, forkOK} {
		noteFork(&healthy, fork)
	}
	if code := get(); code != http.StatusServiceUnavailable {
		t.Fatalf("healthz %d after a failed fork and good ones after it, want 503", code)
	}
}

func TestInitNeedsTheServersArguments(t *testing.T) {
	if _, err := parseConfig([]string{"--mode", "init"}); err == nil {
		t.Fatal("init without a server's arguments was accepted")
	}
	cfg, err := parseConfig([]string{"--mode", "init", "--", "--mode", "server", "--as-child"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.childArgs, " ") != "--mode server --as-child" {
		t.Fatalf("child args %q", cfg.childArgs)
	}
}

func TestAChildUnderInitKeepsNoMessageOrTimeline(t *testing.T) {
	dir := t.TempDir()
	cfg, err := parseConfig([]string{"--mode", "server", "--as-child", "--record-dir", dir})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.terminationLog != "" || cfg.history != "" {
		t.Fatalf("a child keeps a termination message: %q, %q", cfg.terminationLog, cfg.history)
	}
	if err := record(cfg, "start", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "attempts.log")); err == nil {
		t.Fatal("a child under init wrote the attempt's timeline")
	}
}

func TestForkCheckRunsAChildAndReapsIt(t *testing.T) {
	if fork, errno := forkCheck(); fork != forkOK {
		t.Fatalf("fork check %s (%s), want ok", fork, errno)
	}
}

// zombiesOf lists the zombie processes whose parent is ppid.
func zombiesOf(t *testing.T, ppid int) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for _, entry := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", entry.Name(), "stat"))
		if err != nil || procState(stat) != 'Z' {
			continue
		}
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(ppid) {
			count++
		}
	}
	return count
}

// The kubelet's probe kill, as a subreaper sees it: the probe forks its
// children and hangs; killed, its children (already zombies) pass to the
// nearest reaper, here this test (in a container, PID 1), which must reap them.
func TestAKilledProbeLeavesItsChildrenAsZombiesOfTheReaper(t *testing.T) {
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		t.Skipf("cannot become a subreaper: %v", errno)
	}
	dir := t.TempDir()
	probe := exec.Command(os.Args[0], "--mode", "probe-fork", "--children", "3", "--run-for", "1h", "--record-dir", dir)
	if err := probe.Start(); err != nil {
		t.Fatal(err)
	}
	// The probe notes itself before it forks; its children exit at once.
	waitFor(t, "the probe's three children to exit", func() bool { return zombiesOf(t, probe.Process.Pid) == 3 })
	if err := probe.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = probe.Wait()
	waitFor(t, "the three zombies to pass to the reaper", func() bool { return zombiesOf(t, os.Getpid()) == 3 })
	if data, err := os.ReadFile(filepath.Join(dir, probesLog)); err != nil || strings.Count(string(data), "\"probe\"") != 1 {
		t.Fatalf("probes.log %q (%v), want one probe", data, err)
	}
	for i := 0; i < 3; i++ {
		if _, err := syscall.Wait4(-1, nil, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
}

func waitFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
