package main

import (
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// runTLC runs TLC on c with its state files under meta and returns its
// output (stdout and stderr together). A TLC that cannot start shows up in
// the output, which parseOutput then reports as unrecognised.
func runTLC(o options, c config, meta string) string {
	// A temporary directory of its own: TLC unpacks the standard modules
	// there, and concurrent TLCs must not read each other's files.
	cmd := exec.Command(o.java, "-XX:+UseParallelGC", "-Djava.io.tmpdir="+meta, "-cp", o.jar, "tlc2.TLC",
		"-workers", o.workers, "-metadir", meta, "-config", c.name, c.module+".tla")
	cmd.Dir = o.dir
	out, err := cmd.CombinedOutput()
	if err != nil && len(out) == 0 {
		return "tlcrun: " + err.Error()
	}
	return string(out)
}

// result is what one TLC run reported.
type result struct {
	passed    bool   // "No error has been found"
	violated  string // the property TLC reported violated
	failure   string // any other error (parse error, deadlock, exception)
	generated int64
	distinct  int64
	depth     int64 // -1 when TLC did not report it
}

var (
	reInvariant = regexp.MustCompile(`Error: (?:Invariant|Action property) (\S+) is violated`)
	reStates    = regexp.MustCompile(`([\d,]+) states generated, ([\d,]+) distinct states found`)
	reDepth     = regexp.MustCompile(`The depth of the complete state graph search is (\d+)`)
	reError     = regexp.MustCompile(`(?m)^Error: (.*)$`)
)

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64)
	return n
}

// parseOutput reads TLC's verdict and statistics. TLC names violated
// invariants and action properties, but reports a temporal property only
// as "Temporal properties were violated": that is attributed to the
// configuration's PROPERTY when it has exactly one.
func parseOutput(out string, c config) result {
	r := result{depth: -1}
	if m := reStates.FindAllStringSubmatch(out, -1); m != nil {
		last := m[len(m)-1]
		r.generated, r.distinct = atoi(last[1]), atoi(last[2])
	}
	if m := reDepth.FindStringSubmatch(out); m != nil {
		r.depth = atoi(m[1])
	}
	switch {
	case strings.Contains(out, "Model checking completed. No error has been found."):
		r.passed = true
	case reInvariant.MatchString(out):
		r.violated = reInvariant.FindStringSubmatch(out)[1]
	case strings.Contains(out, "Error: Temporal properties were violated."):
		r.violated = "temporal property"
		if len(c.properties) == 1 {
			r.violated = c.properties[0]
		}
	case reError.MatchString(out):
		r.failure = reError.FindStringSubmatch(out)[1]
	default:
		r.failure = "unrecognised TLC output: " + firstLines(out, 3)
	}
	return r
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " | ")
}
