package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// readReport parses the termination message as the kubelet would copy it.
func readReport(t *testing.T, path string) map[string]int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != reportWidth {
		t.Fatalf("report is %d bytes, want every report padded to %d", len(data), reportWidth)
	}
	var report map[string]int64
	if err := json.Unmarshal(data, &report); err != nil {
		t.Fatalf("report %q: %v", data, err)
	}
	return report
}

func TestReporterHeartbeatThenExitOverwritesInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "termination-log")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := openReporter(path, 1000)
	alive := readReport(t, path)
	if alive["start_ns"] != 1000 || alive["alive_ns"] < 1000 || alive["exit_ns"] != 0 {
		t.Fatalf("while running: %v, want start and a heartbeat, no exit", alive)
	}
	r.exit(42)
	done := readReport(t, path)
	if done["exit_code"] != 42 || done["exit_ns"] < alive["alive_ns"] || done["alive_ns"] != 0 {
		t.Fatalf("after exit: %v, want the exit report alone", done)
	}
	r.alive() // a late heartbeat must not replace the exit
	if again := readReport(t, path); again["exit_code"] != 42 {
		t.Fatalf("a heartbeat after the exit overwrote it: %v", again)
	}
}

// message is one attempt's termination message with its history.
type message struct {
	StartNs  int64             `json:"start_ns"`
	ExitCode *int              `json:"exit_code"`
	Attempt  *int              `json:"attempt"`
	Earlier  []json.RawMessage `json:"earlier"`
}

// attemptWithHistory runs one attempt's reporter in dir: it exits with code,
// or is killed after its first heartbeat when code is negative.
func attemptWithHistory(t *testing.T, dir string, startNs int64, code int) message {
	t.Helper()
	path := filepath.Join(t.TempDir(), "termination-log")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := openReporterWithHistory(path, startNs, dir, "app")
	if code >= 0 {
		r.exit(code)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got message
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("message %q: %v", data, err)
	}
	return got
}

func earlierStarts(t *testing.T, m message) []int64 {
	t.Helper()
	starts := []int64{}
	for _, raw := range m.Earlier {
		var report map[string]int64
		if err := json.Unmarshal(raw, &report); err != nil {
			t.Fatalf("earlier report %s: %v", raw, err)
		}
		starts = append(starts, report["start_ns"])
	}
	return starts
}

func TestHistoryNumbersAttemptsAndCarriesTheLastThreeBeforeThem(t *testing.T) {
	dir := t.TempDir()
	want := [][]int64{{}, {100}, {101, 100}, {102, 101, 100}, {103, 102, 101}}
	for n, starts := range want {
		// Attempt 2 is killed: the next one carries its last heartbeat.
		code := n
		if n == 2 {
			code = -1
		}
		got := attemptWithHistory(t, dir, int64(100+n), code)
		if got.Attempt == nil || *got.Attempt != n {
			t.Fatalf("attempt %d numbered %v", n, got.Attempt)
		}
		if got.StartNs != int64(100+n) {
			t.Fatalf("attempt %d: own start %d", n, got.StartNs)
		}
		if seen := earlierStarts(t, got); !slices.Equal(seen, starts) {
			t.Fatalf("attempt %d carries the starts %v, want %v", n, seen, starts)
		}
	}
}

func TestHistoryMarksAnAttemptThatLeftNoReport(t *testing.T) {
	dir := t.TempDir()
	attemptWithHistory(t, dir, 100, 1)
	if err := os.Remove(filepath.Join(dir, "app.report")); err != nil {
		t.Fatal(err)
	}
	got := attemptWithHistory(t, dir, 200, 1)
	if *got.Attempt != 1 || len(got.Earlier) != 1 || string(got.Earlier[0]) != "null" {
		t.Fatalf("got attempt %v earlier %s, want attempt 1 after a null", *got.Attempt, got.Earlier)
	}
}

func TestAnUnreadableHistoryLeavesTheAttemptUnnumbered(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app.history"), []byte("{half"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := attemptWithHistory(t, dir, 100, 1)
	if got.Attempt != nil || got.Earlier != nil || got.ExitCode == nil || *got.ExitCode != 1 {
		t.Fatalf("got %+v, want the plain report with no history", got)
	}
}

func TestReporterOutsideAPodWritesNothing(t *testing.T) {
	r := openReporter(filepath.Join(t.TempDir(), "absent", "log"), 1)
	r.alive()
	r.exit(1) // must not panic without a file
}

func TestEchoNamesTheFile(t *testing.T) {
	line, _ := json.Marshal(echoedEvent{"client.log", "cut", 7})
	if got := string(line); !strings.Contains(got, `"file":"client.log"`) || !strings.Contains(got, `"unix_ns":7`) {
		t.Fatalf("echoed line %s", got)
	}
}

func TestRetriableExitsWithTheRetriableCodeThenTheFinalOne(t *testing.T) {
	cfg := config{mode: "retriable", recordDir: t.TempDir(), failTimes: 2, exitCode: 42, finalExitCode: 1}
	var got []int
	for range 4 {
		got = append(got, retriable(context.Background(), cfg, nil))
	}
	if want := []int{42, 42, 1, 1}; !slices.Equal(got, want) {
		t.Fatalf("exit codes %v, want %v", got, want)
	}
}

func TestFailHostSuffixFailsOnlyTheNamedHost(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Skip("no hostname")
	}
	cfg := config{failTimes: 3, failHostSuffix: host[len(host)-1:]}
	if n := cfg.failTimesHere(); n != 3 {
		t.Fatalf("on the named host: %d failures, want 3", n)
	}
	cfg.failHostSuffix = host + "-not-this-one"
	if n := cfg.failTimesHere(); n != 0 {
		t.Fatalf("on another host: %d failures, want 0", n)
	}
}

func TestFinalExitCodeIsValidated(t *testing.T) {
	if _, err := parseConfig([]string{"--mode", "retriable", "--final-exit-code", "300"}); err == nil {
		t.Fatal("--final-exit-code 300 was accepted")
	}
}

func TestTriggerExitsOnceWithTheTriggerCode(t *testing.T) {
	cfg := config{mode: "trigger", recordDir: t.TempDir(), failTimes: 2, exitCode: 1, finalExitCode: 88}
	var got []int
	for range 5 {
		got = append(got, trigger(context.Background(), cfg, nil))
	}
	if want := []int{1, 1, 88, 1, 1}; !slices.Equal(got, want) {
		t.Fatalf("exit codes %v, want %v", got, want)
	}
}

func TestPaceBurstTakesLongerTheMoreRoundsItRuns(t *testing.T) {
	_, short := timeBurst(1_000)
	_, long := timeBurst(20_000_000)
	if long <= short {
		t.Fatalf("a burst of 20M rounds took %v, one of 1000 %v: the loop was not timed", long, short)
	}
	if burst(3) == burst(4) {
		t.Fatal("the burst's result does not depend on its rounds: the compiler may drop it")
	}
}

func TestPaceModePrintsALineAtOnceAndStopsWhenAsked(t *testing.T) {
	cfg, err := parseConfig([]string{"--mode", "pace", "--every", "1h", "--iterations", "1000"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if code := paceMode(ctx, cfg, nil); code != 0 {
		t.Fatalf("pace exited %d when stopped, want 0", code)
	}
	if _, err := parseConfig([]string{"--mode", "pace", "--iterations", "0"}); err == nil {
		t.Fatal("--iterations 0 was accepted")
	}
}
