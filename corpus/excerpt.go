package corpus

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"shardsim/scenarios"
	"shardsim/simclock"
)

// A golden trace excerpt is the readable companion of a corpus entry's
// digest: the digest says that a run moved, the excerpt says what moved. It
// lives in testdata/<scenario>/<name>.trace under the corpus root, is
// rewritten with the digest by `make corpus`, and is compared line by line
// on replay, so a deliberate change of behaviour shows in review as a text
// diff: how many records of each kind the run made, in which window of
// records two runs part (each window's fingerprint), and the first and last
// records themselves.
const (
	excerptHead    = 40  // first records shown
	excerptTail    = 40  // last records shown
	excerptWindow  = 256 // records per fingerprinted window
	excerptLineMax = 300 // longest record line shown; the rest is counted
)

// ExcerptPath returns where the golden excerpt of the entry stored at path
// lives: <corpus root>/testdata/<scenario dir>/<name>.trace.
func ExcerptPath(path string) string {
	dir, file := filepath.Split(path)
	scenarioDir := filepath.Dir(dir)
	root := filepath.Dir(scenarioDir)
	name := strings.TrimSuffix(file, filepath.Ext(file)) + ".trace"
	return filepath.Join(root, "testdata", filepath.Base(scenarioDir), name)
}

// Replay runs the entry and returns the run's result with its trace excerpt.
func Replay(e Entry) (scenarios.Result, string, error) {
	cfg, err := e.Config()
	if err != nil {
		return scenarios.Result{}, "", err
	}
	return ReplayConfig(e, cfg)
}

// ReplayConfig is Replay with the entry's configuration as the caller
// adjusted it (a longer check budget, say).
func ReplayConfig(e Entry, cfg scenarios.Config) (scenarios.Result, string, error) {
	var sink recordSink
	cfg.TraceOut = &sink
	res, err := scenarios.Run(e.Scenario, cfg)
	if err != nil {
		return scenarios.Result{}, "", err
	}
	if sink.err != nil {
		return scenarios.Result{}, "", fmt.Errorf("corpus: reading the trace: %v", sink.err)
	}
	return res, Excerpt(e, res, sink.records), nil
}

// recordSink collects the JSON-lines trace of a run as records.
type recordSink struct {
	buf     []byte
	records []simclock.Record
	err     error
}

func (s *recordSink) Write(p []byte) (int, error) {
	s.buf = append(s.buf, p...)
	for {
		i := bytes.IndexByte(s.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		var r simclock.Record
		if err := json.Unmarshal(s.buf[:i], &r); err != nil && s.err == nil {
			s.err = err
		}
		s.records = append(s.records, r)
		s.buf = s.buf[i+1:]
	}
}

// Excerpt renders the golden excerpt of a run of entry e.
func Excerpt(e Entry, res scenarios.Result, records []simclock.Record) string {
	var b strings.Builder
	choices, _ := base64.StdEncoding.DecodeString(e.Choices)
	src := fmt.Sprintf("choices %d bytes", len(choices))
	if e.Seed != nil {
		src = fmt.Sprintf("seed %d", *e.Seed)
	}
	bugs := strings.Join(e.Bugs, " ")
	if bugs == "" {
		bugs = "-"
	}
	fmt.Fprintf(&b, "# golden trace excerpt; `make corpus` rewrites it, replay compares it\n")
	fmt.Fprintf(&b, "scenario %s\nsource   %s\nbugs     %s\n", e.Scenario, src, bugs)
	fmt.Fprintf(&b, "verdict  %s\ndigest   %s\n", strings.TrimSpace(string(res.Verdict)+" "+string(res.Property)), res.Digest)
	fmt.Fprintf(&b, "records  %d\nevents   %d\nvirtual  %s\n", len(records), res.Events, fmtTime(simclock.Time(res.VirtualNs)))
	writeKinds(&b, records)
	writeWindows(&b, records)
	head := records[:min(excerptHead, len(records))]
	fmt.Fprintf(&b, "\nfirst %d records\n", len(head))
	writeRecords(&b, head)
	tail := records[max(len(head), len(records)-excerptTail):]
	fmt.Fprintf(&b, "\nlast %d records\n", len(tail))
	writeRecords(&b, tail)
	return b.String()
}

func writeKinds(b *strings.Builder, records []simclock.Record) {
	count := map[string]int{}
	for _, r := range records {
		count[r.Kind]++
	}
	kinds := make([]string, 0, len(count))
	for k := range count {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	fmt.Fprintf(b, "\nrecords per kind\n")
	for _, k := range kinds {
		fmt.Fprintf(b, "  %-28s %6d\n", k, count[k])
	}
}

// writeWindows fingerprints each window of records (sha256 of their lines,
// untruncated): the first window that differs between two excerpts is where
// the runs part, even when the records shown are alike.
func writeWindows(b *strings.Builder, records []simclock.Record) {
	fmt.Fprintf(b, "\nwindows of %d records\n", excerptWindow)
	for lo := 0; lo < len(records); lo += excerptWindow {
		hi := min(lo+excerptWindow, len(records))
		h := sha256.New()
		for _, r := range records[lo:hi] {
			h.Write([]byte(recordLine(r)))
			h.Write([]byte{'\n'})
		}
		fmt.Fprintf(b, "  %6d-%-6d %s\n", lo+1, hi, hex.EncodeToString(h.Sum(nil))[:16])
	}
}

func writeRecords(b *strings.Builder, records []simclock.Record) {
	for _, r := range records {
		b.WriteString("  ")
		b.WriteString(strings.TrimRight(clip(recordLine(r)), " "))
		b.WriteByte('\n')
	}
}

// recordLine renders one record on one line: sequence, time, kind, actor,
// detail.
func recordLine(r simclock.Record) string {
	actor := r.Actor
	if actor == "" {
		actor = "-"
	}
	return fmt.Sprintf("%6d %16s %-18s %-10s %s", r.Seq, fmtTime(r.At), r.Kind, actor, r.Detail)
}

// fmtTime renders virtual time in seconds with every nanosecond.
func fmtTime(t simclock.Time) string {
	ns := int64(t)
	return fmt.Sprintf("%d.%09ds", ns/1e9, ns%1e9)
}

// clip shortens a line to excerptLineMax bytes (on a rune boundary), saying
// how much was left out; the window fingerprints still cover all of it.
func clip(s string) string {
	if len(s) <= excerptLineMax {
		return s
	}
	cut := excerptLineMax
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s…(+%d)", s[:cut], len(s)-cut)
}

// ExcerptDiff summarises how excerpt got differs from want: "" when they are
// equal, else how many lines differ and the first difference, as -want/+got.
func ExcerptDiff(want, got string) string {
	if want == got {
		return ""
	}
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	first, differ := -1, 0
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			differ++
			if first < 0 {
				first = i
			}
		}
	}
	line := func(ls []string, i int) string {
		if i < len(ls) {
			return ls[i]
		}
		return "(none)"
	}
	return fmt.Sprintf("%d excerpt lines differ; first at line %d:\n  -%s\n  +%s", differ, first+1, line(w, first), line(g, first))
}
