package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"shardsim/corpus"
	"shardsim/property"
	"shardsim/reach"
	"shardsim/scenarios"
)

const aboutSweep = `Runs every seed of a range (in parallel; each run is its own world, so the
outcome does not depend on -parallel) and prints a summary: runs, violations
and undecided runs; the failures grouped by property and bug signature (the
bugs switched on, "clean" for none, as corpus entries are named), each group
with its count, its fastest-failing seed, the shape of its violation (the
detail with its particulars blanked out) and that seed's replay command, and
marked new or known against the committed corpus; every failing seed (capped
per group in text, all of them in -json) and every undecided seed with its
replay command.

Saving: failing runs are saved as corpus entries as they are found, under
-corpus DIR, or by default under a new directory in the OS temp dir that the
summary names; -no-save saves nothing. An existing file is never overwritten.

Progress: on a terminal, stderr shows seeds done, the rate, violations and
undecided runs so far and the time left; elsewhere nothing (-progress always
prints a line a second).

Interruption: SIGINT or SIGTERM stops the sweep cleanly: no new seed starts,
the runs under way finish, and the summary covers exactly the seeds run (a
prefix of the range; it says which seeds are left). A second signal kills it.

Sharding: -shard i/n runs block i (from 0) of n contiguous blocks of the
range. Batch engines set it through the environment instead: Bazel
(TEST_SHARD_INDEX, TEST_TOTAL_SHARDS; TEST_SHARD_STATUS_FILE is touched),
Slurm job arrays (SLURM_ARRAY_TASK_ID less SLURM_ARRAY_TASK_MIN, of
SLURM_ARRAY_TASK_COUNT), Kubernetes Indexed Jobs (JOB_COMPLETION_INDEX, with
-shards N). Each shard writes its JSON result (-json on stdout, -out to a
file); simrun merge combines them into exactly the summary one machine would
have printed.`

// sweepFlags are the sweep command's flags.
type sweepFlags struct {
	world     worldFlags
	seeds     string
	parallel  int
	corpusDir string
	noSave    bool
	maxSaved  int
	first     bool
	asJSON    bool
	quiet     bool
	out       string
	shard     string
	shards    int
	progress  string
	shrink    bool
	shrinkMax int
	coverage  bool
}

func (f *sweepFlags) register(fs interface {
	StringVar(*string, string, string, string)
	IntVar(*int, string, int, string)
	BoolVar(*bool, string, bool, string)
}) {
	fs.StringVar(&f.seeds, "seeds", "", "inclusive seed range `A-B` (or one seed A), up to 18446744073709551615")
	fs.IntVar(&f.parallel, "parallel", runtime.NumCPU(), "`N` runs at once, on N threads (unless GOMAXPROCS is set)")
	fs.StringVar(&f.corpusDir, "corpus", "", "save failing runs as corpus entries under `DIR` (default: a new directory under the OS temp dir, made at the first failure)")
	fs.BoolVar(&f.noSave, "no-save", false, "save no failing run")
	fs.IntVar(&f.maxSaved, "max-saved", 10, "save at most `N` failing runs (the summary counts the rest)")
	fs.BoolVar(&f.first, "first", false, "stop at the lowest failing seed")
	fs.BoolVar(&f.asJSON, "json", false, "print the result as one JSON object on stdout, the text summary on stderr")
	fs.BoolVar(&f.quiet, "quiet", false, "print no text summary (with -json: only the JSON object)")
	fs.StringVar(&f.out, "out", "", "also write the JSON result to `FILE` (a directory: a file named after the scenario and shard in it)")
	fs.StringVar(&f.shard, "shard", "", "run only shard `i/n` of the range: block i (from 0) of n")
	fs.IntVar(&f.shards, "shards", 0, "with JOB_COMPLETION_INDEX (a Kubernetes Indexed Job): the number of shards `N`")
	fs.StringVar(&f.progress, "progress", "auto", "progress on stderr: `WHEN` auto (on a terminal), always or never")
	fs.BoolVar(&f.shrink, "shrink", false, "shrink each failing run before saving it (see simrun shrink)")
	fs.IntVar(&f.shrinkMax, "shrink-replays", 5000, "with -shrink, at most `N` replays per failing run")
	fs.BoolVar(&f.coverage, "coverage", false, "print the reachability table: every point of the scenario's group, how often and in how many runs it was reached (this process's seeds)")
}

func cmdSweep(e *env, args []string) (int, error) {
	fs := newFlagSet("sweep")
	var f sweepFlags
	f.world.register(fs)
	f.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return 0, err
	}
	plan, err := planSweep(e, &f)
	if err != nil {
		return 0, err
	}
	return plan.execute(e)
}

// sweepPlan is a validated sweep, ready to run.
type sweepPlan struct {
	flags *sweepFlags
	name  string
	base  scenarios.Config
	all   seedRange // the whole sweep's range
	mine  seedRange // this process's part of it
	empty bool      // this shard holds no seed
	shard shardSpec
	table *reach.Table // with -coverage: what the runs reached
}

func planSweep(e *env, f *sweepFlags) (*sweepPlan, error) {
	name, base, err := f.world.config("sweep")
	if err != nil {
		return nil, err
	}
	all, err := parseSeedRange(f.seeds)
	if err != nil {
		return nil, err
	}
	if f.parallel < 1 {
		return nil, usagef("sweep: -parallel must be at least 1")
	}
	if f.maxSaved < 0 {
		return nil, usagef("sweep: -max-saved must not be negative")
	}
	switch f.progress {
	case "auto", "always", "never":
	default:
		return nil, usagef("sweep: -progress %q: want auto, always or never", f.progress)
	}
	if f.noSave && f.corpusDir != "" {
		return nil, usagef("sweep: -corpus and -no-save are exclusive")
	}
	shard, err := resolveShard(e.getenv, f.shard, f.shards)
	if err != nil {
		return nil, err
	}
	table, err := coverageTable(name, f.coverage)
	if err != nil {
		return nil, err
	}
	noteOverrides(e.stderr, name, base.Options)
	p := &sweepPlan{flags: f, name: name, base: base, all: all, mine: all, shard: shard, table: table}
	if shard.count > 0 {
		p.mine, p.empty = all.shard(shard.index, shard.count)
		p.empty = !p.empty
		if err := shard.touchStatus(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// coverageTable returns the reachability table a -coverage sweep of
// scenario name fills (nil without -coverage).
func coverageTable(name string, on bool) (*reach.Table, error) {
	if !on {
		return nil, nil
	}
	sc, err := scenarios.Lookup(name)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	if sc.Reach == "" {
		return nil, usagef("sweep: scenario %s declares no reachability points", name)
	}
	return reach.NewTable(sc.Reach), nil
}

// execute runs the plan and prints its result.
func (p *sweepPlan) execute(e *env) (int, error) {
	f := p.flags
	acc := newAccumulator(p.name, p.base, p.all, f.first)
	if p.shard.count > 0 {
		acc.sum.Shard = &shardJSON{Index: p.shard.index, Count: p.shard.count, Source: p.shard.source, Seeds: "none"}
		if !p.empty {
			acc.sum.Shard.Seeds = p.mine.String()
		}
	}
	saver := &runSaver{dir: f.corpusDir, off: f.noSave, max: f.maxSaved, stderr: e.stderr}
	if f.shrink {
		text := e.stdout
		if f.asJSON {
			text = e.stderr
		}
		saver.shrink = func(cfg scenarios.Config, entry corpus.Entry) corpus.Entry {
			return shrinkForSweep(p.name, cfg, entry, f.shrinkMax, text, e.stderr)
		}
	}
	defer limitProcs(f.parallel, e.getenv)()
	start := time.Now()
	var sig os.Signal
	if !p.empty {
		// A bad option is bad usage: the first seed runs alone, before the
		// workers start, so it is reported as one line.
		headCfg := p.base
		headCfg.Seed = p.mine.lo
		head, err := scenarios.Run(p.name, headCfg)
		if err != nil {
			return 0, usageError{err.Error()}
		}
		signals := make(chan os.Signal, 2)
		signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
		prog := newProgress(e, f.progress, p.name, p.mine, acc.sum)
		sw := &sweeper{name: p.name, base: p.base, seeds: p.mine, parallel: f.parallel, first: f.first, signals: signals,
			tick: prog.tick, stopped: func() { signal.Stop(signals) },
			commit: func(seed uint64, res scenarios.Result) error {
				acc.add(seed, res)
				if p.table != nil {
					p.table.Add(res.Reach)
				}
				if res.Verdict == property.VerdictViolation {
					cfg := p.base
					cfg.Seed = seed
					saver.save(cfg, res)
				}
				return nil
			},
		}
		sig, err = sw.run(head)
		signal.Stop(signals)
		prog.end()
		if err != nil {
			return 0, err
		}
	}
	sum := acc.finish()
	markKnown(sum.Groups)
	sum.Complete = sig == nil
	if sig != nil {
		sum.Interrupted = signalName(sig)
	}
	p.machineFigures(sum, time.Since(start).Seconds(), saver)
	return p.report(e, sum)
}

// machineFigures fills in what this machine did: its rates and its saves.
func (p *sweepPlan) machineFigures(sum *sweepSummary, wall float64, saver *runSaver) {
	sum.WallSeconds = wall
	if wall > 0 {
		sum.SeedsPerSec = float64(sum.Runs) / wall
		sum.EventsPerSec = float64(sum.Events) / wall
		sum.VirtualPerWall = float64(sum.VirtualNs) / 1e9 / wall
	}
	sum.CorpusDir, sum.Saved, sum.NotSaved = saver.dir, saver.saved, saver.dropped
}

// report prints the summary and writes the JSON result where asked.
func (p *sweepPlan) report(e *env, sum *sweepSummary) (int, error) {
	f := p.flags
	text := e.stdout
	if f.asJSON {
		text = e.stderr
	}
	if !f.quiet {
		printSummary(text, sum)
		printMachine(text, sum)
	}
	if p.table != nil {
		p.table.Write(text)
	}
	if f.out != "" {
		path := f.out
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			name := fmt.Sprintf("sweep-%s.json", p.name)
			if p.shard.count > 0 {
				name = fmt.Sprintf("sweep-%s-shard-%d-of-%d.json", p.name, p.shard.index, p.shard.count)
			}
			path = filepath.Join(path, name)
		}
		if err := writeJSONFile(path, sum); err != nil {
			return 0, usagef("sweep: -out: %v", err)
		}
	}
	if f.asJSON {
		writeJSON(e.stdout, sum)
	}
	return sum.exitStatus(), nil
}

func writeJSONFile(path string, v any) error {
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	writeJSON(file, v)
	return file.Close()
}

func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// runSaver saves failing runs as they are found, up to a cap, never over
// an existing file. Without a directory it makes one under the OS temp dir
// at the first save.
type runSaver struct {
	dir     string
	off     bool
	max     int
	saved   []string
	dropped uint64
	stderr  interface{ Write([]byte) (int, error) }
	// shrink, when set, minimises an entry before it is saved (-shrink).
	shrink func(scenarios.Config, corpus.Entry) corpus.Entry
}

func (s *runSaver) save(cfg scenarios.Config, res scenarios.Result) {
	if s.off {
		return
	}
	if len(s.saved) >= s.max {
		s.dropped++
		return
	}
	if s.dir == "" {
		dir, err := os.MkdirTemp("", "simrun-sweep-")
		if err != nil {
			fmt.Fprintf(s.stderr, "simrun: cannot make a directory for failing runs: %v\n", err)
			s.off = true
			return
		}
		s.dir = dir
	}
	entry := corpus.FromResult(cfg, res)
	if s.shrink != nil {
		entry = s.shrink(cfg, entry)
	}
	path, err := corpus.Save(s.dir, entry)
	switch {
	case errors.Is(err, corpus.ErrExists):
		fmt.Fprintf(s.stderr, "simrun: seed %d: %s exists, not overwritten\n", cfg.Seed, path)
	case err != nil:
		fmt.Fprintf(s.stderr, "simrun: could not save seed %d: %v\n", cfg.Seed, err)
	default:
		s.saved = append(s.saved, path)
	}
}

// limitProcs lets a sweep of parallel workers run Go code on as many
// threads as it has workers, unless GOMAXPROCS says otherwise, and returns
// what puts the previous setting back. The worlds are the work: a thread
// beyond them only takes the collector's background share and the
// goroutines porcupine starts for every check, and waking it for each of
// those (a futex call per goroutine) cost more than it gave: migrate seeds
// 1-300 at -parallel 1 ran at a median 487 seeds/s on one thread against
// 467 on two (ten interleaved runs each, 2-core machine), for 0.65 against
// 0.69 CPU seconds on average.
func limitProcs(parallel int, getenv func(string) string) (restore func()) {
	if getenv("GOMAXPROCS") != "" || parallel >= runtime.GOMAXPROCS(0) {
		return func() {}
	}
	prev := runtime.GOMAXPROCS(parallel)
	return func() { runtime.GOMAXPROCS(prev) }
}
