package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"shardsim/model/bugs"
	"shardsim/scenarios"
)

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// newFlagSet returns a flag set that reports errors instead of exiting and
// prints nothing on its own.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parseFlags parses args and rejects stray positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return usagef("%s: %v", fs.Name(), err)
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

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

// parseSeedRange parses "A-B" (inclusive, A <= B) or a single seed "A".
func parseSeedRange(s string) (uint64, uint64, error) {
	if s == "" {
		return 0, 0, usagef("sweep: -seeds is required (for example -seeds 1-500)")
	}
	lo, hi, found := strings.Cut(s, "-")
	a, err := strconv.ParseUint(lo, 10, 64)
	if err != nil {
		return 0, 0, usagef("-seeds %q: %q is not a seed", s, lo)
	}
	b := a
	if found {
		if b, err = strconv.ParseUint(hi, 10, 64); err != nil {
			return 0, 0, usagef("-seeds %q: %q is not a seed", s, hi)
		}
	}
	if b < a {
		return 0, 0, usagef("-seeds %q: the range is empty", s)
	}
	return a, b, nil
}

func fmtBugFlags(set bugs.Set) string {
	var b strings.Builder
	for _, n := range set.Names() {
		fmt.Fprintf(&b, " -bug %s", n)
	}
	return b.String()
}

// worldFlags are the flags every command that runs a world shares: which
// scenario, which bugs, which option overrides.
type worldFlags struct {
	scenario string
	bugs     multiFlag
	opts     multiFlag
}

func (w *worldFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&w.scenario, "scenario", "", "scenario to run (simrun list shows them)")
	fs.Var(&w.bugs, "bug", "switch on a registered bug (repeatable)")
	fs.Var(&w.opts, "opt", "override a scenario option, NAME=VALUE (repeatable)")
}

// config validates the flags and returns the scenario name and the run
// configuration they describe.
func (w *worldFlags) config(cmd string) (string, scenarios.Config, error) {
	if w.scenario == "" {
		return "", scenarios.Config{}, usagef("%s: -scenario is required", cmd)
	}
	if _, err := scenarios.Lookup(w.scenario); err != nil {
		return "", scenarios.Config{}, usageError{err.Error()}
	}
	set, err := parseBugs(w.bugs)
	if err != nil {
		return "", scenarios.Config{}, err
	}
	options, err := parseOptions(w.opts)
	if err != nil {
		return "", scenarios.Config{}, err
	}
	return w.scenario, scenarios.Config{Bugs: set, Options: options}, nil
}
