package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"shardsim/modelcheck"
	"shardsim/property"
	"shardsim/scenarios"
)

const aboutCheck = `Explores a scenario's runs systematically instead of at random: every choice
stream within the bounds, breadth-first (or by iterative deepening), each run
the real protocol code with its nemesis and checkers, every state judged, and
every state already explored pruned by a fingerprint of the world (see the
modelcheck package: the fingerprint names a state by its history, so pruning
is sound). A path is a list of draws; zero is the quiet choice everywhere, and
depth is how many draws a path sets to something else.

-bounds picks a preset (simrun check -scenario NAME -bounds list shows them):
the scenario options that make a small world and the bounds to explore it.
Flags given alongside override the preset's bounds; -opt adds to or overrides
its options.

On a violation the shortest path found (fewest non-zero draws) is written as
a choice file (-out; never over an existing file without -force) and the
exact simrun run -choices command that replays it is printed. With -json,
stdout holds one JSON object ({"states","distinct","depth","states_per_sec",
"verdict","property",...}) and the text goes to stderr.

-max-memory bounds the process's memory (default 2GB): the search's tables
(the seen set and the queue of prefixes) take at most three quarters of it,
counted exactly, and the Go runtime is asked to keep its heap within it
less 64MB for what lies outside the heap (a soft limit, never below 256MB;
under it, at most 256MB of garbage beyond the tables). A
search that reaches the bound stops with the verdict "incomplete: memory
bound reached" (in JSON, "verdict":"incomplete" and "incomplete" says why);
-time and -max-states stop a search incomplete too.

Exit status 0: no violation within the bounds (the text says whether the
bounds left paths unexplored); 1: a violation; 3: a run's history check could
not decide, the memory bound stopped the search, or -exhaustive was asked and
a bound cut the search short.`

// checkFlags are check's own flags.
type checkFlags struct {
	preset     string
	depth      int
	values     int
	menu       int
	draws      int
	faults     int
	branch     string
	faultForks string
	maxStates  int
	limit      time.Duration
	maxMemory  string
	strategy   string
	out        string
	force      bool
	exhaustive bool
	noPrune    bool
	asJSON     bool
}

func (c *checkFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.preset, "bounds", "small", "preset `NAME` of options and bounds (small, medium; \"none\": flags only; \"list\": show them)")
	fs.IntVar(&c.depth, "depth", 0, "at most `N` draws per path set to anything but zero (default: the preset's)")
	fs.IntVar(&c.values, "values", 0, "an integer draw takes its `N` lowest values and its largest; an amount N-1 values up to its largest (default: the preset's)")
	fs.IntVar(&c.menu, "menu", -1, "an integer draw with at most `N` outcomes (a pick from a short menu) takes every value (0: none; default: the preset's)")
	fs.IntVar(&c.draws, "draws", -1, "branch only at the first `N` draws of a run (0: all; default: the preset's)")
	fs.IntVar(&c.faults, "faults", -2, "at most `N` non-zero draws on fault forks per path (-1: no limit; default: the preset's)")
	fs.StringVar(&c.branch, "branch", "", "the forks whose draws branch, comma-separated `PATTERNS` (\"worker/*\", \"*,-swarm\"; default: the preset's)")
	fs.StringVar(&c.faultForks, "fault-forks", "", "the forks whose non-zero draws count against -faults, `PATTERNS` (default: the preset's)")
	fs.IntVar(&c.maxStates, "max-states", 0, "stop after `N` distinct states (0: no limit)")
	fs.DurationVar(&c.limit, "time", 0, "stop after `TIME` of wall-clock time (0: no limit)")
	fs.StringVar(&c.maxMemory, "max-memory", "2GB", "bound the memory to `SIZE` (\"512MB\", \"4GB\"; 0: no bound): the search stops, incomplete, when its tables reach three quarters of it")
	fs.StringVar(&c.strategy, "strategy", "", "search order, bfs or iddfs (default: the preset's, else bfs)")
	fs.StringVar(&c.out, "out", "", "write a violation's choices to `FILE` (default: check-SCENARIO-PROPERTY.choices, never overwriting)")
	fs.BoolVar(&c.force, "force", false, "overwrite -out if it exists")
	fs.BoolVar(&c.exhaustive, "exhaustive", false, "exit 3 unless the search covered every path (no bound, -max-states or -time cut it)")
	fs.BoolVar(&c.noPrune, "no-prune", false, "explore through states seen before (the reference a pruned search must agree with)")
	fs.BoolVar(&c.asJSON, "json", false, "print one JSON object on stdout and the text on stderr")
}

// checkJSON is the JSON object of simrun check.
type checkJSON struct {
	Scenario       string   `json:"scenario"`
	Preset         string   `json:"preset"`
	Strategy       string   `json:"strategy"`
	Bugs           []string `json:"bugs"`
	States         int      `json:"states"`
	Distinct       int      `json:"distinct"`
	Runs           int      `json:"runs"`
	Pruned         int      `json:"pruned"`
	Depth          int      `json:"depth"`
	StatesPerSec   float64  `json:"states_per_sec"`
	DistinctPerSec float64  `json:"distinct_per_sec"`
	ElapsedSec     float64  `json:"elapsed_s"`
	Complete       bool     `json:"complete"`
	Bounded        bool     `json:"bounded"`
	Verdict        string   `json:"verdict"`
	Incomplete     string   `json:"incomplete,omitempty"` // why a search stopped before the end of its bounds
	TableBytes     int      `json:"table_bytes"`
	Property       string   `json:"property"`
	WitnessDepth   int      `json:"witness_depth"`
	WitnessStates  int      `json:"witness_states,omitempty"`
	Choices        string   `json:"choices,omitempty"`
	Replay         string   `json:"replay,omitempty"`
}

// checkSetup is a validated check: what to search and how.
type checkSetup struct {
	name      string
	cfg       scenarios.Config
	preset    string
	bounds    modelcheck.Bounds
	strategy  modelcheck.Strategy
	maxMemory int64 // -max-memory in bytes (0: none)
}

func cmdCheck(e *env, args []string) (int, error) {
	fs := newFlagSet("check")
	var wf worldFlags
	wf.register(fs)
	var cf checkFlags
	cf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return 0, err
	}
	if cf.preset == "list" {
		return listPresets(e.stdout, wf.scenario)
	}
	setup, err := checkConfig(fs, &wf, &cf)
	if err != nil {
		return 0, err
	}
	if cf.out != "" && !cf.force {
		if _, err := os.Stat(cf.out); err == nil {
			return 0, usagef("check: %s exists (use -force to overwrite it)", cf.out)
		}
	}
	text := e.stdout
	if cf.asJSON {
		text = e.stderr
	}
	printCheckHead(text, setup)
	setup.bounds.Grown = heapLimiter(setup.maxMemory)
	setup.bounds.Grown(0)
	rep, err := modelcheck.Search(modelcheck.ScenarioWorld(setup.name, setup.cfg), setup.bounds, setup.strategy)
	if err != nil {
		return 0, usagef("check: %v", err)
	}
	out := checkJSON{Scenario: setup.name, Preset: setup.preset, Strategy: setup.strategy.String(), Bugs: setup.cfg.Bugs.Names(),
		States: rep.States, Distinct: rep.Distinct, Runs: rep.Runs, Pruned: rep.Pruned, Depth: rep.Depth,
		StatesPerSec: rep.StatesPerSec(), DistinctPerSec: rep.DistinctPerSec(), ElapsedSec: rep.Elapsed.Seconds(),
		Complete: rep.Complete, Bounded: rep.Bounded || rep.Truncated, Verdict: string(property.VerdictOK),
		Incomplete: incomplete(rep), TableBytes: rep.TableBytes}
	code := exitOK
	switch {
	case rep.Property != "":
		out.Verdict, out.Property = string(property.VerdictViolation), rep.Property
		out.WitnessDepth, out.WitnessStates = rep.WitnessDepth(), rep.WitnessStates
		if out.Choices, out.Replay, err = saveWitness(text, setup, &cf, rep); err != nil {
			return 0, err
		}
		code = exitViolation
	case rep.Unknown != "":
		out.Verdict, out.Property = string(property.VerdictUnknown), rep.Unknown
		code = exitUnknown
	case rep.Truncated:
		out.Verdict = verdictIncomplete
		if rep.MemoryBound || cf.exhaustive {
			code = exitUnknown
		}
	case cf.exhaustive && rep.Bounded:
		code = exitUnknown
	}
	printCheckResult(text, rep, out)
	if cf.asJSON {
		b, _ := json.Marshal(out)
		fmt.Fprintln(e.stdout, string(b))
	}
	return code, nil
}

// heapHeadroom is how much garbage check lets the heap hold beyond its
// tables. simrun's collector target (gcPercent) lets the heap grow to five
// times what is live, which for a search is mostly its tables: a coord
// small search peaked at 517 MB resident for 65 MB of tables. Worlds are a
// few megabytes each and die young, so a fixed headroom of garbage keeps
// collections as rare as they were for a fraction of the memory.
const heapHeadroom = 256 << 20

// outsideHeap is what the process holds beside the Go heap (its code,
// goroutine stacks, the runtime's own structures), which the runtime's
// memory limit does not count: about 30 MB at the end of a coord medium
// search under -max-memory 512MB, whose resident set came to 542 MB.
const outsideHeap = 64 << 20

// heapLimiter returns the Bounds.Grown of a search: it sets the runtime's
// soft memory limit to the tables plus a quarter and heapHeadroom, never
// above maxMemory less outsideHeap (maxMemory 0: no bound) and never below
// heapHeadroom (below that the process's own code and data would keep the
// collector running).
func heapLimiter(maxMemory int64) func(int) {
	return func(tables int) {
		limit := int64(tables) + int64(tables)/4 + heapHeadroom
		if maxMemory > 0 {
			limit = max(min(limit, maxMemory-outsideHeap), heapHeadroom)
		}
		debug.SetMemoryLimit(limit)
	}
}

// verdictIncomplete is check's verdict when a search stopped before the
// end of its bounds with no violation found: not a pass (TLC's word).
const verdictIncomplete = "incomplete"

// incomplete says why a search stopped before the end of its bounds, or "".
func incomplete(rep modelcheck.Report) string {
	switch {
	case rep.Property != "" || !rep.Truncated:
		return ""
	case rep.MemoryBound:
		return "memory bound reached"
	}
	return "time or state bound reached"
}

// checkConfig validates the flags and merges them with the preset.
func checkConfig(fs *flag.FlagSet, wf *worldFlags, cf *checkFlags) (checkSetup, error) {
	name, cfg, err := wf.config("check")
	if err != nil {
		return checkSetup{}, err
	}
	s := checkSetup{name: name, cfg: cfg, preset: cf.preset, bounds: modelcheck.Defaults}
	if cf.preset != "none" {
		p, err := modelcheck.LookupPreset(name, cf.preset)
		if err != nil {
			if flagGiven(fs, "bounds") {
				return checkSetup{}, usagef("check: %v", err)
			}
			s.preset = "none" // the default preset, where the scenario has none
		} else {
			s.bounds, s.strategy = p.Bounds, p.Strategy
			s.cfg.Options = mergeOptions(p.Options, cfg.Options)
		}
	}
	if err := cf.override(fs, &s); err != nil {
		return checkSetup{}, err
	}
	return s, nil
}

// override applies the bound flags that were given.
func (cf *checkFlags) override(fs *flag.FlagSet, s *checkSetup) error {
	b := &s.bounds
	set := func(name string, ok bool, what string) error {
		if flagGiven(fs, name) && !ok {
			return usagef("check: -%s %s", name, what)
		}
		return nil
	}
	for _, err := range []error{
		set("depth", cf.depth >= 0, "must be at least 0"),
		set("values", cf.values >= 2, "must be at least 2"),
		set("menu", cf.menu >= 0, "must be at least 0"),
		set("draws", cf.draws >= 0, "must be at least 0"),
		set("faults", cf.faults >= -1, "must be -1 (no limit) or more"),
		set("max-states", cf.maxStates >= 0, "must be at least 0"),
		set("time", cf.limit >= 0, "must not be negative"),
	} {
		if err != nil {
			return err
		}
	}
	if flagGiven(fs, "depth") {
		b.Depth = cf.depth
	}
	if flagGiven(fs, "values") {
		b.Values = cf.values
	}
	if flagGiven(fs, "menu") {
		b.Menu = cf.menu
	}
	if flagGiven(fs, "draws") {
		b.Draws = cf.draws
	}
	if flagGiven(fs, "faults") {
		b.Faults = cf.faults
	}
	if flagGiven(fs, "branch") {
		b.Branch = modelcheck.ParseForks(cf.branch)
	}
	if flagGiven(fs, "fault-forks") {
		b.Fault = modelcheck.ParseForks(cf.faultForks)
	}
	b.Max, b.Time, b.NoPrune = cf.maxStates, cf.limit, cf.noPrune
	mem, err := parseBytes(cf.maxMemory)
	if err != nil {
		return usagef("check: -max-memory: %v", err)
	}
	s.maxMemory, b.Memory = mem, int(mem/4*3)
	if cf.strategy != "" {
		st, err := modelcheck.ParseStrategy(cf.strategy)
		if err != nil {
			return usagef("check: -strategy: %v", err)
		}
		s.strategy = st
	}
	return nil
}

// parseBytes reads a size: a number of bytes, or a number with the suffix
// KB, MB or GB (powers of 1024; "1.5GB" is allowed).
func parseBytes(v string) (int64, error) {
	num, unit := strings.ToUpper(strings.TrimSpace(v)), int64(1)
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"B", 1}} {
		if n, ok := strings.CutSuffix(num, u.suffix); ok {
			num, unit = strings.TrimSpace(n), u.size
			break
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || f*float64(unit) > 1<<62 {
		return 0, fmt.Errorf("%q is not a size (512MB, 4GB, 0 for none)", v)
	}
	return int64(f * float64(unit)), nil
}

// mergeOptions returns the preset's options overridden by the user's.
func mergeOptions(preset, user map[string]string) map[string]string {
	out := maps.Clone(preset)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, user)
	return out
}

// listPresets prints the presets of one scenario, or of every scenario.
func listPresets(w io.Writer, scenario string) (int, error) {
	names := modelcheck.PresetScenarios()
	if scenario != "" {
		if _, err := scenarios.Lookup(scenario); err != nil {
			return 0, usageError{err.Error()}
		}
		names = []string{scenario}
	}
	for _, sc := range names {
		for _, n := range modelcheck.PresetNames(sc) {
			p, _ := modelcheck.LookupPreset(sc, n)
			fmt.Fprintf(w, "%s -bounds %s: %s\n    %s\n    options %s\n", sc, n, p.About, fmtBounds(p.Bounds, p.Strategy), fmtOptions(p.Options))
		}
	}
	return exitOK, nil
}

func fmtOptions(opts map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		parts = append(parts, k+"="+opts[k])
	}
	return strings.Join(parts, " ")
}

func fmtBounds(b modelcheck.Bounds, st modelcheck.Strategy) string {
	draws, faults, branch := "all", "any", b.Branch.String()
	if b.Draws > 0 {
		draws = fmt.Sprintf("first %d", b.Draws)
	}
	if b.Faults >= 0 {
		faults = fmt.Sprintf("%d on %s", b.Faults, b.Fault)
	}
	if b.Branch == nil {
		branch = "all forks"
	}
	return fmt.Sprintf("depth %d  values %d  menu %d  draws %s  faults %s  branch %s  strategy %s", b.Depth, b.Values, b.Menu, draws, faults, branch, st)
}

func printCheckHead(w io.Writer, s checkSetup) {
	fmt.Fprintf(w, "check    %s  bounds %s  bugs %s\n", s.name, s.preset, s.cfg.Bugs)
	fmt.Fprintf(w, "options  %s\n", fmtOptions(s.cfg.Options))
	fmt.Fprintf(w, "bounds   %s\n", fmtBounds(s.bounds, s.strategy))
	if s.maxMemory > 0 {
		fmt.Fprintf(w, "memory   at most %s (-max-memory), %s of it for the search's tables\n", fmtBytes(int(s.maxMemory)), fmtBytes(s.bounds.Memory))
	}
}

// fmtBytes writes a size in MB (or KB, below one MB).
func fmtBytes(n int) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}

func printCheckResult(w io.Writer, rep modelcheck.Report, out checkJSON) {
	cover := "complete within the bounds"
	switch {
	case rep.MemoryBound:
		cover = "stopped by the memory bound before the end"
	case rep.Truncated:
		cover = "stopped by -max-states or -time before the end"
	case rep.Property != "":
		cover = "stopped at the first violation"
	case !rep.Bounded:
		cover = "exhaustive: no bound cut a path"
	}
	fmt.Fprintf(w, "search   %d states  %d distinct  %d runs  %d cut at a state seen before  depth %d  %s\n",
		rep.States, rep.Distinct, rep.Runs, rep.Pruned, rep.Depth, cover)
	fmt.Fprintf(w, "speed    %.1fs  %.0f states/s  %.0f distinct states/s\n", rep.Elapsed.Seconds(), rep.StatesPerSec(), rep.DistinctPerSec())
	fmt.Fprintf(w, "tables   %s (the seen set and the queue of prefixes)\n", fmtBytes(rep.TableBytes))
	fmt.Fprintf(w, "verdict  %s", out.Verdict)
	if out.Incomplete != "" {
		fmt.Fprintf(w, ": %s (no violation in the states explored)", out.Incomplete)
	}
	if out.Property != "" {
		fmt.Fprintf(w, "  %s", out.Property)
	}
	fmt.Fprintln(w)
	if rep.Property != "" {
		fmt.Fprintf(w, "witness  depth %d, found after %d states and %d runs: %s\n", rep.WitnessDepth(), rep.WitnessStates, rep.WitnessRuns,
			strings.Join(modelcheck.Chosen(rep.Witness), " "))
		fmt.Fprintf(w, "choices  %s\nreplay   %s\n", out.Choices, out.Replay)
	}
}

// saveWitness writes the witness as a choice file, checks that it replays
// to the same violation, and returns the file and the replay command.
func saveWitness(w io.Writer, s checkSetup, cf *checkFlags, rep modelcheck.Report) (string, string, error) {
	stream := modelcheck.Stream(rep.Witness)
	if len(stream) == 0 {
		stream = []byte{0} // the quiet run, asked for on purpose (simrun run refuses an empty file)
	}
	path, err := writeChoices(cf.out, fmt.Sprintf("check-%s-%s", s.name, rep.Property), stream, cf.force)
	if err != nil {
		return "", "", err
	}
	cfg := s.cfg
	cfg.Choices = stream
	res, err := scenarios.Run(s.name, cfg)
	if err != nil || res.Verdict != property.VerdictViolation || string(res.Property) != rep.Property {
		fmt.Fprintf(w, "warning  the witness did not replay to %s (got %s %s %v)\n", rep.Property, res.Verdict, res.Property, err)
	}
	return path, specOf(s.name, cfg, path).command(), nil
}

// writeChoices writes stream to path, or, with path empty, to the first
// free file name base.choices, base-2.choices, ...; it never writes over
// a file unless force.
func writeChoices(path, base string, stream []byte, force bool) (string, error) {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	candidates := []string{path}
	if path == "" {
		candidates = nil
		for i := 1; i <= 100; i++ {
			name := base + ".choices"
			if i > 1 {
				name = fmt.Sprintf("%s-%d.choices", base, i)
			}
			candidates = append(candidates, name)
		}
	}
	for _, p := range candidates {
		f, err := os.OpenFile(p, flags, 0o644)
		if errors.Is(err, os.ErrExist) && path == "" {
			continue
		}
		if err != nil {
			return "", usagef("check: %v", err)
		}
		_, werr := f.Write(stream)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return "", usagef("check: %v", werr)
		}
		return p, nil
	}
	return "", usagef("check: no free file name for %s.choices", base)
}
