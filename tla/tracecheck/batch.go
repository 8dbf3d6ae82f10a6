package main

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// A batch validates several seeds' traces in one TLC run (specifications
// whose trace module holds a sequence Traces, the migration ones): one JVM
// start and one parse for the batch instead of one per seed, which is most
// of the cost of a short trace. A trace the batch did not validate is
// validated again alone, which finds the first event no step matched.

// runTrace is one seed's run and its trace module.
type runTrace struct {
	r      result
	module []byte
}

var (
	reKeys      = regexp.MustCompile(`(?m)^TraceKeys == 1\.\.(\d+)$`)
	reMaxTS     = regexp.MustCompile(`(?m)^TraceMaxTS == (\d+)$`)
	reValidated = regexp.MustCompile(`<<"validated", (\d+)>>`)
)

// checkBatch validates seeds in one TLC run.
func checkBatch(o options, seeds []uint64) ([]result, error) {
	sp := specOf[o.scenario]
	runs := make([]runTrace, len(seeds))
	for i, seed := range seeds {
		rt, err := runSeed(o, sp, seed)
		if err != nil {
			return nil, err
		}
		runs[i] = rt
	}
	combined, err := combine(sp.module, runs)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "tracecheck-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := stage(o, sp, combined, dir); err != nil {
		return nil, err
	}
	start := time.Now()
	out := tlc(o, sp.trace, dir)
	seconds := time.Since(start).Seconds()
	validated := map[int]bool{}
	for _, m := range reValidated.FindAllStringSubmatch(out, -1) {
		k, _ := strconv.Atoi(m[1])
		validated[k] = true
	}
	if len(validated) == 0 && reError.MatchString(out) {
		return nil, fmt.Errorf("seeds %d-%d: TLC: %s", seeds[0], seeds[len(seeds)-1], reError.FindStringSubmatch(out)[1])
	}
	total := 0
	for _, rt := range runs {
		total += rt.r.events
	}
	results := make([]result, len(runs))
	for i, rt := range runs {
		r := rt.r
		if validated[i+1] {
			r.validated, r.reached = true, r.events
			// The batch's time, shared by the traces in proportion to their events.
			r.seconds = seconds * float64(r.events) / float64(max(total, 1))
		} else if r, err = checkSeed(o, seeds[i]); err != nil {
			return nil, err
		}
		results[i] = r
	}
	return results, nil
}

// combine joins the runs' trace modules into one module name holding
// Traces, one trace per run, with the largest key and timestamp ranks.
func combine(name string, runs []runTrace) ([]byte, error) {
	var keys, maxTS int
	var b strings.Builder
	var names []string
	for i, rt := range runs {
		k, errK := rank(reKeys, rt.module)
		ts, errT := rank(reMaxTS, rt.module)
		start := bytes.Index(rt.module, []byte("Trace == <<\n"))
		end := bytes.LastIndex(rt.module, []byte("\n>>\n"))
		if errK != nil || errT != nil || start < 0 || end < start {
			return nil, fmt.Errorf("seed %d: trace module not in the expected form", rt.r.seed)
		}
		keys, maxTS = max(keys, k), max(maxTS, ts)
		n := fmt.Sprintf("Trace%d", i+1)
		names = append(names, n)
		fmt.Fprintf(&b, "%s == <<\n%s\n>>\n", n, rt.module[start+len("Trace == <<\n"):end])
	}
	head := fmt.Sprintf("---- MODULE %s ----\n\\* %d traces joined by tla/tracecheck.\nEXTENDS Integers, Sequences, TLC\nTraceKeys == 1..%d\nTraceMaxTS == %d\n",
		name, len(runs), keys, maxTS)
	return []byte(head + b.String() + "Traces == <<" + strings.Join(names, ", ") + ">>\n====\n"), nil
}

func rank(re *regexp.Regexp, module []byte) (int, error) {
	m := re.FindSubmatch(module)
	if m == nil {
		return 0, fmt.Errorf("no %s", re)
	}
	return strconv.Atoi(string(m[1]))
}
