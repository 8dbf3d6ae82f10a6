package main

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// row is one configuration's run and verdict.
type row struct {
	cfg     config
	result  result
	seconds float64
	ok      bool
	problem string // why the outcome is not the expected one
}

// judge compares the run's result with what the configuration expects.
func (r *row) judge() {
	res := r.result
	switch {
	case res.failure != "":
		r.problem = "TLC error: " + res.failure
	case r.cfg.expect == "" && !res.passed:
		r.problem = "safe configuration violated " + res.violated
	case r.cfg.expect != "" && res.passed:
		r.problem = "gap configuration passed; expected " + r.cfg.expect + " to be violated"
	case r.cfg.expect != "" && res.violated != r.cfg.expect:
		r.problem = "violated " + res.violated + ", expected " + r.cfg.expect
	default:
		r.ok = true
	}
}

// outcome names what TLC reported.
func (r row) outcome() string {
	switch {
	case r.result.passed:
		return "pass"
	case r.result.violated != "":
		return "violated " + r.result.violated
	case r.problem != "":
		return "error"
	}
	return "?"
}

func (r row) expected() string {
	if r.cfg.expect == "" {
		return "pass"
	}
	return "violated " + r.cfg.expect
}

// line is the progress line printed after each configuration.
func (r row) line() string {
	verdict := "ok  "
	if !r.ok {
		verdict = "FAIL"
	}
	s := fmt.Sprintf("%s %-52s %-40s %7.1fs", verdict, r.cfg.name, r.outcome(), r.seconds)
	if r.problem != "" {
		s += "\n     " + r.problem
	}
	return s
}

func printTable(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "configuration\texpected\toutcome\tstates\tdistinct\tdepth\tseconds\tdistinct/s\t")
	for _, r := range rows {
		depth := "-"
		if r.result.depth >= 0 {
			depth = strconv.FormatInt(r.result.depth, 10)
		}
		rate := "-"
		if r.seconds > 0 {
			rate = strconv.FormatInt(int64(float64(r.result.distinct)/r.seconds), 10)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%.1f\t%s\t\n", r.cfg.name, r.expected(), r.outcome(),
			r.result.generated, r.result.distinct, depth, r.seconds, rate)
	}
	tw.Flush()
}
