// Command runc-capwrap is an OCI runtime shim for hosts whose capability
// bounding set is smaller than the full set (for example a VM that drops
// CAP_SYS_RESOURCE). Docker asks runc for every capability when a container is
// --privileged; runc then fails with "unable to apply caps: operation not
// permitted". The wrapper removes from the OCI spec every capability the host
// cannot grant, then execs the real runc with the unchanged arguments.
//
// Where every capability is available it changes nothing.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// capabilityNames lists the Linux capabilities by number (linux/capability.h).
var capabilityNames = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER",
	"CAP_FSETID", "CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP",
	"CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST",
	"CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER",
	"CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE",
	"CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
	"CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD",
	"CAP_LEASE", "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP",
	"CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM",
	"CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF",
	"CAP_CHECKPOINT_RESTORE",
}

// realRuntimeEnv names the variable that overrides where the real runc lives.
const realRuntimeEnv = "RUNC_CAPWRAP_RUNTIME"

func main() {
	realRuntime := os.Getenv(realRuntimeEnv)
	if realRuntime == "" {
		realRuntime = findRunc()
	}
	if err := adjust(os.Args[1:]); err != nil {
		// Never block a container over the wrapper itself: runc reports the
		// real problem, if any, with its own message.
		fmt.Fprintf(os.Stderr, "runc-capwrap: %v\n", err)
	}
	args := append([]string{realRuntime}, os.Args[1:]...)
	if err := syscall.Exec(realRuntime, args, os.Environ()); err != nil {
		fmt.Fprintf(os.Stderr, "runc-capwrap: exec %s: %v\n", realRuntime, err)
		os.Exit(127)
	}
}

func findRunc() string {
	for _, candidate := range []string{"/usr/sbin/runc", "/usr/bin/runc", "/usr/local/sbin/runc", "/usr/local/bin/runc"} {
		if st, err := os.Stat(candidate); err == nil && !st.IsDir() {
			return candidate
		}
	}
	return "runc"
}

// adjust finds the spec file that the runc sub-command will read and filters
// its capabilities.
func adjust(args []string) error {
	allowed, full, err := boundingSet()
	if err != nil || full {
		return err
	}
	command, rest := subcommand(args)
	switch command {
	case "create", "run":
		bundle := flagValue(rest, "bundle", "b")
		if bundle == "" {
			bundle = "."
		}
		return filterFile(filepath.Join(bundle, "config.json"), allowed, true)
	case "exec":
		if process := flagValue(rest, "process", "p"); process != "" {
			return filterFile(process, allowed, false)
		}
	}
	return nil
}

// boundingSet reads CapBnd of this process, which the host's limit bounds.
func boundingSet() (map[string]bool, bool, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return nil, false, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if !strings.HasPrefix(line, "CapBnd:") {
			continue
		}
		mask, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(line, "CapBnd:")), 16, 64)
		if err != nil {
			return nil, false, err
		}
		allowed := map[string]bool{}
		full := true
		for bit, name := range capabilityNames {
			if mask&(1<<uint(bit)) != 0 {
				allowed[name] = true
			} else {
				full = false
			}
		}
		return allowed, full, nil
	}
	return nil, false, fmt.Errorf("no CapBnd line in /proc/self/status")
}

// subcommand skips runc's global flags and returns the sub-command and its arguments.
func subcommand(args []string) (string, []string) {
	globalWithValue := map[string]bool{"--root": true, "--log": true, "--log-format": true, "--criu": true, "--rootless": true}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if strings.HasPrefix(arg, "-") {
			if globalWithValue[arg] {
				i++
			}
			continue
		}
		return arg, args[i+1:]
	}
	return "", nil
}

// flagValue returns the value of --long or -short in either "--f v" or "--f=v" form.
func flagValue(args []string, long, short string) string {
	for i, arg := range args {
		for _, name := range []string{"--" + long, "-" + short} {
			if arg == name && i+1 < len(args) {
				return args[i+1]
			}
			if strings.HasPrefix(arg, name+"=") {
				return strings.TrimPrefix(arg, name+"=")
			}
		}
	}
	return ""
}

// filterFile rewrites the capability lists of a spec (process under "process")
// or of a bare process description.
func filterFile(path string, allowed map[string]bool, isSpec bool) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var document map[string]any
	if err := json.Unmarshal(raw, &document); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	process := document
	if isSpec {
		inner, ok := document["process"].(map[string]any)
		if !ok {
			return nil
		}
		process = inner
	}
	capabilities, ok := process["capabilities"].(map[string]any)
	if !ok {
		return nil
	}
	for set, value := range capabilities {
		names, ok := value.([]any)
		if !ok {
			continue
		}
		kept := make([]any, 0, len(names))
		for _, name := range names {
			if text, ok := name.(string); ok && allowed[text] {
				kept = append(kept, text)
			}
		}
		capabilities[set] = kept
	}
	out, err := json.Marshal(document)
	if err != nil {
		return err
	}
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, info.Mode().Perm())
}
