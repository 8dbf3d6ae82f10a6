package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"shardsim/corpus"
)

// TestMain removes the simrun binary the signal tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if binaryPath != "" {
		os.RemoveAll(filepath.Dir(binaryPath))
	}
	os.Exit(code)
}

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// simrunBinary builds simrun once for the tests that need a real process.
func simrunBinary(t *testing.T) string {
	t.Helper()
	binaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "simrun-test-bin-")
		if err != nil {
			binaryErr = err
			return
		}
		binaryPath = filepath.Join(dir, "simrun")
		out, err := exec.Command("go", "build", "-o", binaryPath, ".").CombinedOutput()
		if err != nil {
			binaryErr = errors.New(string(out))
		}
	})
	if binaryErr != nil {
		t.Fatalf("building simrun: %v", binaryErr)
	}
	return binaryPath
}

// startSweep starts a long sweep as a real process and waits until its
// progress shows on stderr (so it is under way), then returns it with its
// stdout and the rest of its stderr.
func startSweep(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(simrunBinary(t), append([]string{"sweep", "-progress", "always"}, args...)...)
	var stdout, rest bytes.Buffer
	cmd.Stdout = &stdout
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pipe)
		once := false
		for sc.Scan() {
			if !once && strings.HasPrefix(sc.Text(), "sweep ") {
				once = true
				close(started)
			}
			rest.WriteString(sc.Text() + "\n")
		}
	}()
	select {
	case <-started:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the sweep showed no progress in a minute")
	}
	return cmd, &stdout, &rest
}

func exitStatus(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// SIGINT stops a sweep that found violations: the partial summary covers
// the seeds actually run, the failures found so far are saved, and the
// exit status says a violation was found.
func TestSIGINTStopsASweepCleanly(t *testing.T) {
	dir := t.TempDir()
	cmd, stdout, stderr := startSweep(t, "-scenario", "coord", "-seeds", "1-100000000", "-bug", "coord.split-two-txns", "-corpus", dir, "-parallel", "2")
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code := exitStatus(cmd.Wait())
	out := stdout.String()
	if code != exitViolation {
		t.Fatalf("exit %d, want 1:\n%s\n%s", code, out, stderr)
	}
	line := lineAfter(t, out, "stopped  by SIGINT after seeds ")
	covered := strings.Fields(line)[0]
	r, err := parseSeedRange(covered)
	if err != nil || r.lo != 1 || r.hi >= 100000000 || !strings.Contains(line, "the rest: -seeds "+itoa(int(r.hi)+1)+"-100000000") {
		t.Fatalf("stopped line %q", line)
	}
	if !strings.Contains(out, "runs "+itoa(int(r.hi))+" ") {
		t.Fatalf("the summary does not count exactly the covered seeds:\n%s", out)
	}
	files, _ := corpus.Files(dir)
	if len(files) == 0 || !strings.Contains(out, "saved    "+itoa(len(files))+" failing runs under "+dir) {
		t.Fatalf("%d files saved; summary:\n%s", len(files), out)
	}
	for _, f := range files {
		if _, err := corpus.Load(f); err != nil {
			t.Fatal(err)
		}
	}
}

// SIGTERM stops a clean sweep: not a pass (exit 143), the JSON result
// says it was interrupted and covers a prefix of the range.
func TestSIGTERMStopsASweepCleanly(t *testing.T) {
	cmd, stdout, stderr := startSweep(t, "-scenario", "kv", "-seeds", "1-100000000", "-no-save", "-json", "-parallel", "2")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code := exitStatus(cmd.Wait())
	sum := decodeOne[sweepSummary](t, stdout.String())
	if code != exitSIGTERM || sum.Interrupted != "SIGTERM" || sum.Complete || sum.Violations != 0 {
		t.Fatalf("exit %d, %+v\n%s", code, sum, stderr)
	}
	r, err := parseSeedRange(sum.Covered)
	if err != nil || r.lo != 1 || sum.Runs != r.hi || sum.Runs == 0 {
		t.Fatalf("covered %q with %d runs", sum.Covered, sum.Runs)
	}
	if !strings.Contains(stderr.String(), "stopped  by SIGTERM") {
		t.Fatalf("text summary on stderr lacks the stop:\n%s", stderr)
	}
}
