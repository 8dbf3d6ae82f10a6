// Command tracecheck validates simulated runs against their TLA+
// specification: for each seed it runs the scenario with its trace mapped
// onto the specification (simrun run -tla-trace does the same), then has
// TLC replay the trace with the scenario's Trace<Spec>.tla, and reports
// whether every step was a step of the specification and, when not, the
// first step that was not.
//
//	go run ./tla/tracecheck -scenario coord -seeds 1-200
//	go run ./tla/tracecheck -scenario coord-zombie -seeds 18 -bug coord.no-fence-check -expect-fail
//	go run ./tla/tracecheck -scenario migrate -seeds 1-200 -batch 25
//
// It prints one line per seed and a summary with events validated per
// second (TLC's wall time, JVM start included). Exit status: 0 when every
// trace ended as expected (validated, or with -expect-fail rejected), 1
// otherwise, 2 on bad usage.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"shardsim/model/bugs"
	"shardsim/scenarios"
)

// traceSpec names a scenario's specification and trace modules. With
// byDepth the trace module holds a sequence of traces (Traces), so seeds
// can be validated in batches (-batch), and a trace validates when TLC's
// search reaches its end (printed as <<"validated", t>>; alone, its depth
// is one more than the events) and ends without error, instead of by the
// violation of NotDone: TLC then prints no behaviour, which for the
// migration traces (hundreds of versions in every state) costs more than
// the search.
type traceSpec struct {
	spec, trace, module string
	byDepth             bool
}

// specOf maps a scenario to its specification and trace module.
var specOf = map[string]traceSpec{
	"coord":        {"ShardCoordination", "TraceShardCoordination", "CoordTrace", false},
	"coord-zombie": {"ShardCoordination", "TraceShardCoordination", "CoordTrace", false},
	"coord-churn":  {"ShardCoordination", "TraceShardCoordination", "CoordTrace", false},
	// The migration traces are checked against the refined specification
	// RangeMigrationSteps.tla (durable steps), not RangeMigration.tla.
	"migrate":         {"RangeMigrationSteps", "TraceRangeMigration", "MigTrace", true},
	"migrate-abandon": {"RangeMigrationSteps", "TraceRangeMigration", "MigTrace", true},
}

type options struct {
	scenario   string
	from, to   uint64
	jar, dir   string
	java       string
	bugs       []string
	expectFail bool
	keep       string
	parallel   int
	batch      int
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func parse(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("tracecheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var seeds, bugList string
	def := os.Getenv("TLA2TOOLS")
	if def == "" {
		def = filepath.Join("..", "shared", "tools", "tla2tools.jar")
	}
	fs.StringVar(&o.scenario, "scenario", "coord", "scenario to run (coord, coord-zombie, coord-churn, migrate, migrate-abandon)")
	fs.StringVar(&seeds, "seeds", "1-10", "seeds, A-B or N")
	fs.StringVar(&o.jar, "jar", def, "path of tla2tools.jar (default $TLA2TOOLS, else ../shared/tools/tla2tools.jar)")
	fs.StringVar(&o.dir, "dir", "tla", "directory of the specifications")
	fs.StringVar(&o.java, "java", "java", "the java command")
	fs.StringVar(&bugList, "bug", "", "comma-separated bugs to switch on in the runs (the specification stays correct)")
	fs.BoolVar(&o.expectFail, "expect-fail", false, "every trace must be rejected (for runs with a bug on)")
	fs.StringVar(&o.keep, "keep", "", "copy traces that do not end as expected into this folder")
	fs.IntVar(&o.parallel, "parallel", 2, "seeds validated at once (each TLC runs one worker)")
	fs.IntVar(&o.batch, "batch", 1, "seeds validated by one TLC run (migrate, migrate-abandon: specifications with a sequence of traces; 1 for the others)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	sp, ok := specOf[o.scenario]
	if !ok {
		return o, fmt.Errorf("no trace specification for scenario %q", o.scenario)
	}
	if !sp.byDepth {
		o.batch = 1 // one trace per module: nothing to batch
	}
	var err error
	if o.from, o.to, err = seedRange(seeds); err != nil {
		return o, err
	}
	if bugList != "" {
		o.bugs = strings.Split(bugList, ",")
	}
	for _, b := range o.bugs {
		if _, ok := bugs.Lookup(b); !ok {
			return o, fmt.Errorf("unknown bug %q", b)
		}
	}
	if _, err := os.Stat(o.jar); err != nil {
		return o, fmt.Errorf("no TLA+ tools jar at %s (set TLA2TOOLS or -jar)", o.jar)
	}
	o.jar, err = filepath.Abs(o.jar)
	return o, err
}

func seedRange(s string) (uint64, uint64, error) {
	a, b, found := strings.Cut(s, "-")
	from, err := strconv.ParseUint(a, 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("bad -seeds %q", s)
	}
	to := from
	if found {
		if to, err = strconv.ParseUint(b, 10, 64); err != nil || to < from {
			return 0, 0, fmt.Errorf("bad -seeds %q", s)
		}
	}
	return from, to, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parse(args, stderr)
	if err != nil {
		if err != flag.ErrHelp {
			fmt.Fprintln(stderr, "tracecheck:", err)
		}
		return 2
	}
	var sum summary
	results := checkAll(o)
	for seed := o.from; seed <= o.to; seed++ {
		out := <-results[seed-o.from]
		if out.err != nil {
			fmt.Fprintln(stderr, "tracecheck:", out.err)
			return 2
		}
		sum.add(out.r, o.expectFail)
		fmt.Fprintln(stdout, out.r.line(o.expectFail))
	}
	fmt.Fprintln(stdout, sum.String())
	if sum.unexpected > 0 {
		return 1
	}
	return 0
}

type outcome struct {
	r   result
	err error
}

// checkAll validates the seeds, o.parallel at a time, each seed's outcome
// arriving on its own channel so they can be printed in seed order.
func checkAll(o options) []chan outcome {
	n := int(o.to - o.from + 1)
	results := make([]chan outcome, n)
	for i := range results {
		results[i] = make(chan outcome, 1)
	}
	size := max(o.batch, 1)
	slots := make(chan struct{}, max(o.parallel, 1))
	go func() {
		for i := 0; i < n; i += size {
			slots <- struct{}{}
			go func(i, j int) {
				defer func() { <-slots }()
				if j-i == 1 {
					r, err := checkSeed(o, o.from+uint64(i))
					results[i] <- outcome{r, err}
					return
				}
				var seeds []uint64
				for k := i; k < j; k++ {
					seeds = append(seeds, o.from+uint64(k))
				}
				rs, err := checkBatch(o, seeds)
				for k := i; k < j; k++ {
					if err != nil {
						results[k] <- outcome{err: err}
					} else {
						results[k] <- outcome{r: rs[k-i]}
					}
				}
			}(i, min(i+size, n))
		}
	}()
	return results
}

// result is one seed's validation.
type result struct {
	seed      uint64
	events    int
	validated bool
	reached   int    // events TLC matched before it found no way on
	failing   string // the first event no step matched
	verdict   string // the run's own verdict
	seconds   float64
	problem   string
}

func (r result) line(expectFail bool) string {
	s := fmt.Sprintf("seed %-5d run %-9s events %5d  tlc %5.1fs  ", r.seed, r.verdict, r.events, r.seconds)
	switch {
	case r.problem != "":
		return s + "ERROR " + r.problem
	case r.validated:
		s += "validated"
	default:
		s += fmt.Sprintf("REJECTED at event %d of %d: %s", r.reached+1, r.events, r.failing)
	}
	if r.validated == expectFail {
		s += "   (unexpected)"
	}
	return s
}

type summary struct {
	runs, validated, rejected, unexpected, events int
	seconds                                       float64
}

func (s *summary) add(r result, expectFail bool) {
	s.runs++
	s.events += r.events
	s.seconds += r.seconds
	switch {
	case r.problem != "":
		s.unexpected++
	case r.validated:
		s.validated++
	default:
		s.rejected++
	}
	if r.problem == "" && r.validated == expectFail {
		s.unexpected++
	}
}

func (s summary) String() string {
	rate := 0.0
	if s.seconds > 0 {
		rate = float64(s.events) / s.seconds
	}
	return fmt.Sprintf("tracecheck: %d runs, %d validated, %d rejected, %d not as expected; %d events in %.1fs of TLC (%.0f events/s)",
		s.runs, s.validated, s.rejected, s.unexpected, s.events, s.seconds, rate)
}

// checkSeed runs one seed with its trace and validates the trace.
func checkSeed(o options, seed uint64) (result, error) {
	sp := specOf[o.scenario]
	rt, err := runSeed(o, sp, seed)
	if err != nil {
		return rt.r, err
	}
	r, buf := rt.r, bytes.NewBuffer(rt.module)
	dir, err := os.MkdirTemp("", "tracecheck-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	if err := stage(o, sp, buf.Bytes(), dir); err != nil {
		return r, err
	}
	start := time.Now()
	out := tlc(o, sp.trace, dir)
	r.seconds = time.Since(start).Seconds()
	judge(&r, out, sp.byDepth)
	if !r.validated && r.problem == "" {
		r.failing = eventAt(buf.Bytes(), r.reached)
	}
	if r.validated == o.expectFail && o.keep != "" {
		_ = os.MkdirAll(o.keep, 0o755)
		_ = os.WriteFile(filepath.Join(o.keep, fmt.Sprintf("%s-seed%d.tla", o.scenario, seed)), buf.Bytes(), 0o644)
	}
	return r, nil
}

// runSeed runs one seed of the scenario with its trace.
func runSeed(o options, sp traceSpec, seed uint64) (runTrace, error) {
	rt := runTrace{r: result{seed: seed}}
	var buf bytes.Buffer
	cfg := scenarios.Config{Seed: seed, TLATrace: &buf, TLATraceModule: sp.module}
	if len(o.bugs) > 0 {
		set, err := bugs.Parse(o.bugs...)
		if err != nil {
			return rt, err
		}
		cfg.Bugs = set
	}
	res, err := scenarios.Run(o.scenario, cfg)
	if err != nil {
		return rt, err
	}
	rt.r.verdict = string(res.Verdict)
	rt.module = buf.Bytes()
	rt.r.events = bytes.Count(rt.module, []byte("\n  [act |-> "))
	return rt, nil
}

// stage puts the specification, the trace specification and the trace
// module into dir, with the trace specification's configuration.
func stage(o options, sp traceSpec, data []byte, dir string) error {
	for _, f := range []string{sp.spec + ".tla", sp.trace + ".tla"} {
		b, err := os.ReadFile(filepath.Join(o.dir, f))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			return err
		}
	}
	cfg := "INIT TraceInit\nNEXT TraceNext\nINVARIANT NotDone\nCHECK_DEADLOCK FALSE\n"
	if sp.byDepth {
		cfg = "INIT TraceInit\nNEXT TraceNext\nCHECK_DEADLOCK FALSE\n"
	}
	if err := os.WriteFile(filepath.Join(dir, sp.trace+".cfg"), []byte(cfg), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, sp.module+".tla"), data, 0o644)
}

func tlc(o options, trace, dir string) string {
	// Each TLC gets its own temporary directory: TLC unpacks the standard
	// modules there, and two at once in one directory read each other's
	// half-written files.
	cmd := exec.Command(o.java, "-XX:+UseParallelGC", "-Djava.io.tmpdir="+dir, "-cp", o.jar, "tlc2.TLC", "-workers", "1",
		"-metadir", filepath.Join(dir, "states"), "-config", trace+".cfg", trace+".tla")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil && len(out) == 0 {
		return "tracecheck: " + err.Error()
	}
	return string(out)
}

var (
	reDepth = regexp.MustCompile(`The depth of the complete state graph search is (\d+)`)
	reError = regexp.MustCompile(`(?m)^Error: (.*)$`)
)

// judge reads TLC's verdict: NotDone violated (or, byDepth, a search that
// ended without error as deep as the trace is long) means a behaviour
// followed the whole trace; a search that ends short of it stopped at the
// event after the deepest state it reached.
func judge(r *result, out string, byDepth bool) {
	switch {
	case strings.Contains(out, "Error: Invariant NotDone is violated."):
		r.validated, r.reached = true, r.events
	case strings.Contains(out, "Model checking completed. No error has been found."):
		if m := reDepth.FindStringSubmatch(out); m != nil {
			d, _ := strconv.Atoi(m[1])
			r.reached = d - 1
		}
		if byDepth && r.reached == r.events {
			r.validated = true
			return
		}
		r.failing = "no step of the specification matches it"
	case reError.MatchString(out):
		r.problem = "TLC: " + reError.FindStringSubmatch(out)[1]
	default:
		r.problem = "unrecognised TLC output"
	}
}

// eventAt returns the start of the trace's event number i (from 0).
func eventAt(data []byte, i int) string {
	parts := bytes.Split(data, []byte("\n  [act |-> "))
	if i+1 >= len(parts) {
		return "(past the end)"
	}
	e := string(parts[i+1])
	if len(e) > 160 {
		e = e[:160] + "..."
	}
	return "[act |-> " + e
}
