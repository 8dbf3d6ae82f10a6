package main

import (
	"fmt"
	"io"
	"os"
	"time"
)

// progress shows how a sweep is going on stderr: seeds done, the rate,
// violations and undecided runs so far, and the time left. On a terminal
// it rewrites one line; with -progress always elsewhere it prints a line
// per report; by default it stays quiet when stderr is not a terminal, so
// logs and pipes get only the summary.
type progress struct {
	w        io.Writer
	on       bool
	terminal bool
	name     string
	total    float64
	start    time.Time
	sum      *sweepSummary // read for the counts so far (the collector's goroutine writes it)
	printed  bool
}

func newProgress(e *env, when, name string, seeds seedRange, sum *sweepSummary) *progress {
	tty := e.isTerminal()
	on := when == "always" || when == "auto" && tty
	return &progress{w: e.stderr, on: on, terminal: tty, name: name, total: seeds.count(), start: time.Now(), sum: sum}
}

// tick reports done seeds. It runs on the collector's goroutine, like the
// commits that update the summary, so it reads the counts safely.
func (p *progress) tick(done uint64) {
	if !p.on {
		return
	}
	elapsed := time.Since(p.start).Seconds()
	rate := float64(done) / max(elapsed, 1e-9)
	eta := "?"
	if rate > 0 {
		eta = (time.Duration((p.total-float64(done))/rate) * time.Second).Round(time.Second).String()
	}
	line := fmt.Sprintf("sweep %s: %d/%.0f seeds (%.1f%%)  %.1f seeds/s  violations %d  unknown %d  ETA %s",
		p.name, done, p.total, 100*float64(done)/p.total, rate, p.sum.Violations, p.sum.Unknown, eta)
	if p.terminal {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
	p.printed = true
}

// end finishes the progress line.
func (p *progress) end() {
	if p.on && p.terminal && p.printed {
		fmt.Fprintln(p.w)
	}
}

// stderrIsTerminal reports whether the process's stderr is a terminal: a
// character device other than /dev/null.
func stderrIsTerminal() bool {
	st, err := os.Stderr.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(st, null) {
		return false
	}
	return true
}
