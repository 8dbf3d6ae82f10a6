package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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

// progressDone and progressViolations read a sweep's progress line.
var (
	progressDone       = regexp.MustCompile(`^sweep [^:]*: (\d+)/`)
	progressViolations = regexp.MustCompile(` violations (\d+) `)
)

// progressAtLeast says whether a progress line shows at least runs seeds
// done and violations found. The progress ticks on wall time, so what the
// first tick shows depends on the machine's speed: the signal tests wait
// for the state they need rather than for the first tick.
func progressAtLeast(line string, runs, violations int) bool {
	d, v := progressDone.FindStringSubmatch(line), progressViolations.FindStringSubmatch(line)
	if d == nil || v == nil {
		return false
	}
	nd, _ := strconv.Atoi(d[1])
	nv, _ := strconv.Atoi(v[1])
	return nd >= runs && nv >= violations
}

// startSweep starts a long sweep as a real process and waits until a
// progress line on stderr shows at least runs seeds done and violations
// found, then returns it with its stdout and the rest of its stderr, and
// a wait that returns the process's end once its stderr is read to the end
// (exec: Wait before the reads finish may lose the last lines).
func startSweep(t *testing.T, runs, violations int, args ...string) (*exec.Cmd, func() error, *bytes.Buffer, *bytes.Buffer) {
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
	started, read := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(pipe)
		once := false
		for sc.Scan() {
			if !once && progressAtLeast(sc.Text(), runs, violations) {
				once = true
				close(started)
			}
			rest.WriteString(sc.Text() + "\n")
		}
	}()
	select {
	case <-started:
	case <-time.After(5 * time.Minute): // a hang guard only, generous for a loaded machine
		cmd.Process.Kill()
		t.Fatalf("the sweep showed no %d runs and %d violations in five minutes", runs, violations)
	}
	wait := func() error {
		<-read
		return cmd.Wait()
	}
	return cmd, wait, &stdout, &rest
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
	cmd, wait, stdout, stderr := startSweep(t, 1, 1, "-scenario", "coord", "-seeds", "1-100000000", "-bug", "coord.split-two-txns", "-corpus", dir, "-parallel", "2")
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code := exitStatus(wait())
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
	cmd, wait, stdout, stderr := startSweep(t, 1, 0, "-scenario", "kv", "-seeds", "1-100000000", "-no-save", "-json", "-parallel", "2")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code := exitStatus(wait())
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
