package main

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"shardsim/model/bugs"
	"shardsim/scenarios"
)

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// parseOptions turns K=V flags into a map.
func parseOptions(opts []string) (map[string]string, error) {
	if len(opts) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, o := range opts {
		k, v, ok := strings.Cut(o, "=")
		if !ok || k == "" {
			return nil, usagef("-opt %q: want NAME=VALUE", o)
		}
		out[k] = v
	}
	return out, nil
}

// parseBugs validates bug names.
func parseBugs(names []string) (bugs.Set, error) {
	set, err := bugs.Parse(names...)
	if err != nil {
		return bugs.Set{}, usageError{err.Error()}
	}
	return set, nil
}

// defaultCheckTimeout is the wall time a history check (porcupine) may
// take before the run is reported undecided.
const defaultCheckTimeout = 30 * time.Second

// worldFlags are the flags every command that runs a world shares: which
// scenario, which bugs, which option overrides, and the history checks'
// time budget.
type worldFlags struct {
	scenario     string
	bugs         multiFlag
	opts         multiFlag
	checkTimeout time.Duration
}

func (w *worldFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&w.scenario, "scenario", "", "`NAME` of the scenario to run (simrun list shows them)")
	fs.Var(&w.bugs, "bug", "switch on the registered bug `NAME` (repeatable; simrun list shows them)")
	fs.Var(&w.opts, "opt", "override one scenario option, `NAME=VALUE` (repeatable; simrun list shows each scenario's options and ranges)")
	registerCheckTimeout(fs, &w.checkTimeout)
}

// registerCheckTimeout adds -check-timeout, which replay shares.
func registerCheckTimeout(fs *flag.FlagSet, d *time.Duration) {
	fs.DurationVar(d, "check-timeout", defaultCheckTimeout,
		"wall-clock `TIME` each linearizability check (porcupine) may take before the run is reported undecided (exit 3); "+
			"it bounds the checker's search, not the run's virtual time, so a faster machine may decide what a slower one could not")
}

// config validates the flags and returns the scenario name and the run
// configuration they describe.
func (w *worldFlags) config(cmd string) (string, scenarios.Config, error) {
	if w.scenario == "" {
		return "", scenarios.Config{}, usagef("%s: -scenario is required (simrun list shows the scenarios)", cmd)
	}
	if _, err := scenarios.Lookup(w.scenario); err != nil {
		return "", scenarios.Config{}, usageError{err.Error()}
	}
	if w.checkTimeout <= 0 {
		return "", scenarios.Config{}, usagef("%s: -check-timeout must be positive", cmd)
	}
	set, err := parseBugs(w.bugs)
	if err != nil {
		return "", scenarios.Config{}, err
	}
	options, err := parseOptions(w.opts)
	if err != nil {
		return "", scenarios.Config{}, err
	}
	return w.scenario, scenarios.Config{Bugs: set, Options: options, CheckTimeout: w.checkTimeout}, nil
}

// seedRange is an inclusive range of seeds. Its size can be 2^64 (the
// whole space), which does not fit a uint64, so it is never computed as
// hi-lo+1 without care: span is hi-lo.
type seedRange struct{ lo, hi uint64 }

func (r seedRange) span() uint64 { return r.hi - r.lo }

func (r seedRange) String() string {
	if r.lo == r.hi {
		return strconv.FormatUint(r.lo, 10)
	}
	return fmt.Sprintf("%d-%d", r.lo, r.hi)
}

// count is the number of seeds as a float, for rates and progress (exact
// enough for display; never used to stop a loop).
func (r seedRange) count() float64 { return float64(r.span()) + 1 }

// parseSeedRange parses "A-B" (inclusive, A <= B, up to 2^64-1) or a
// single seed "A".
func parseSeedRange(s string) (seedRange, error) {
	if s == "" {
		return seedRange{}, usagef("sweep: -seeds is required (for example -seeds 1-500)")
	}
	lo, hi, found := strings.Cut(s, "-")
	a, err := strconv.ParseUint(lo, 10, 64)
	if err != nil {
		return seedRange{}, usagef("-seeds %q: %q is not a seed (0 to 18446744073709551615)", s, lo)
	}
	b := a
	if found {
		if b, err = strconv.ParseUint(hi, 10, 64); err != nil {
			return seedRange{}, usagef("-seeds %q: %q is not a seed (0 to 18446744073709551615)", s, hi)
		}
	}
	if b < a {
		return seedRange{}, usagef("-seeds %q: the range is empty", s)
	}
	return seedRange{a, b}, nil
}

// replaySpec is what a replay command must carry to reproduce a run.
type replaySpec struct {
	scenario     string
	seed         uint64
	choicesFile  string // when set, the run was driven by this file's bytes
	bugs         bugs.Set
	options      map[string]string
	checkTimeout time.Duration
}

func specOf(name string, cfg scenarios.Config, choicesFile string) replaySpec {
	return replaySpec{scenario: name, seed: cfg.Seed, choicesFile: choicesFile, bugs: cfg.Bugs, options: cfg.Options, checkTimeout: cfg.CheckTimeout}
}

// command is the exact command line that reproduces the run: the seed or
// the choices file, every bug, every option override, and the check budget
// when it is not the default (an undecided verdict depends on it).
func (s replaySpec) command() string {
	var b strings.Builder
	fmt.Fprintf(&b, "simrun run -scenario %s", s.scenario)
	if s.choicesFile != "" {
		fmt.Fprintf(&b, " -choices %s", shellQuote(s.choicesFile))
	} else {
		fmt.Fprintf(&b, " -seed %d", s.seed)
	}
	for _, n := range s.bugs.Names() {
		fmt.Fprintf(&b, " -bug %s", n)
	}
	for _, k := range slices.Sorted(maps.Keys(s.options)) {
		fmt.Fprintf(&b, " -opt %s", shellQuote(k+"="+s.options[k]))
	}
	if s.checkTimeout != 0 && s.checkTimeout != defaultCheckTimeout {
		fmt.Fprintf(&b, " -check-timeout %v", s.checkTimeout)
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain
// characters.
func shellQuote(s string) string {
	plain := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./=:,+@%", c)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// noteOverrides says on w, before a run starts, which overrides lie
// above the range runs draw their option from: such a run is larger (or
// stranger) than any sweep covers, and the history checks grow fast with
// clients and operations, so it may take long before it prints anything.
func noteOverrides(w io.Writer, name string, opts map[string]string) {
	if len(opts) == 0 {
		return
	}
	specs, err := scenarios.Options(name)
	if err != nil {
		return
	}
	for _, s := range specs {
		if v, ok := opts[s.Name]; ok && s.AboveDrawn(v) {
			fmt.Fprintf(w, "simrun: note: %s=%s lies above its drawn range %s..%s: the run is larger than any sweep covers and may be slow (history checks grow fast with clients and operations)\n",
				s.Name, v, s.Low, s.High)
		}
	}
}
