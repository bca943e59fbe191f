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
