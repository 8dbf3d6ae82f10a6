package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"shardsim/corpus"
	"shardsim/property"
	"shardsim/scenarios"
)

// sweepJSON is the last line of `simrun sweep -json`.
type sweepJSON struct {
	Scenario           string                `json:"scenario"`
	Runs               int                   `json:"runs"`
	Violations         int                   `json:"violations"`
	Unknown            int                   `json:"unknown"`
	FirstViolationSeed *uint64               `json:"first_violation_seed"`
	Property           property.Name         `json:"property"`
	Properties         map[property.Name]int `json:"properties"`
	SeedsPerSec        float64               `json:"seeds_per_sec"`
	EventsPerSec       float64               `json:"events_per_sec"`
	VirtualPerWall     float64               `json:"virtual_per_wall"` // virtual time simulated per second of wall time
	Bugs               []string              `json:"bugs"`
}

type sweepResult struct {
	seed uint64
	res  scenarios.Result
	err  error
}

func cmdSweep(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("sweep")
	var wf worldFlags
	wf.register(fs)
	seeds := fs.String("seeds", "", "inclusive seed range A-B")
	parallel := fs.Int("parallel", runtime.NumCPU(), "runs at once")
	corpusDir := fs.String("corpus", "corpus", "save failing runs here (empty: don't save)")
	maxSaved := fs.Int("max-saved", 10, "save at most this many failing runs")
	first := fs.Bool("first", false, "stop at the lowest failing seed")
	shrinkSaved := fs.Bool("shrink", false, "shrink each failing run before saving it (see simrun shrink)")
	shrinkReplays := fs.Int("shrink-replays", 5000, "with -shrink, at most this many replays per failing run")
	asJSON := fs.Bool("json", false, "end with one JSON summary object")
	if err := parseFlags(fs, args); err != nil {
		return 0, err
	}
	name, base, err := wf.config("sweep")
	if err != nil {
		return 0, err
	}
	lo, hi, err := parseSeedRange(*seeds)
	if err != nil {
		return 0, err
	}
	if *parallel < 1 {
		return 0, usagef("sweep: -parallel must be at least 1")
	}
	set := base.Bugs
	// A bad option is a usage error: run the first seed alone, before
	// starting the workers, so it is reported as one line; its result
	// counts as the sweep's first.
	start := time.Now()
	headCfg := base
	headCfg.Seed = lo
	headRes, err := scenarios.Run(name, headCfg)
	if err != nil {
		return 0, usageError{err.Error()}
	}
	results := sweepSeeds(name, base, sweepResult{seed: lo, res: headRes}, hi, *parallel, *first, stderr)
	elapsed := time.Since(start).Seconds()

	sum := sweepJSON{Scenario: name, Properties: map[property.Name]int{}, Bugs: append([]string{}, set.Names()...)}
	var events uint64
	var virtual int64
	saved := 0
	for _, r := range results {
		if r.err != nil {
			return 0, usageError{r.err.Error()}
		}
		sum.Runs++
		events += r.res.Events
		virtual += r.res.VirtualNs
		switch r.res.Verdict {
		case property.VerdictViolation:
			sum.Violations++
			sum.Properties[r.res.Property]++
			if sum.FirstViolationSeed == nil {
				s := r.seed
				sum.FirstViolationSeed, sum.Property = &s, r.res.Property
			}
			if *corpusDir != "" && saved < *maxSaved {
				cfg := base
				cfg.Seed = r.seed
				entry := corpus.FromResult(cfg, r.res)
				if *shrinkSaved {
					entry = shrinkForSweep(name, cfg, entry, *shrinkReplays, stdout, stderr)
				}
				if path, err := corpus.Save(*corpusDir, entry); err == nil {
					saved++
					fmt.Fprintf(stdout, "saved    %s\n", path)
				} else {
					fmt.Fprintf(stderr, "simrun: could not save seed %d: %v\n", r.seed, err)
				}
			}
		case property.VerdictUnknown:
			sum.Unknown++
		}
	}
	if elapsed > 0 {
		sum.SeedsPerSec = float64(sum.Runs) / elapsed
		sum.EventsPerSec = float64(events) / elapsed
		sum.VirtualPerWall = float64(virtual) / 1e9 / elapsed
	}
	printSweep(stdout, sum, results, set.String())
	if *asJSON {
		out, _ := json.Marshal(sum)
		fmt.Fprintln(stdout, string(out))
	}
	switch {
	case sum.Violations > 0:
		return exitViolation, nil
	case sum.Unknown > 0:
		return exitUnknown, nil
	}
	return exitOK, nil
}

// sweepSeeds runs the seeds after head.seed up to hi on parallel workers
// (head is the first seed's result, already run). Each run is its own
// world, so parallelism cannot change any run's outcome. With first, seeds
// above the lowest failing one are skipped.
func sweepSeeds(name string, base scenarios.Config, head sweepResult, hi uint64, parallel int, first bool, progress io.Writer) []sweepResult {
	var mu sync.Mutex
	lo := head.seed
	next := lo + 1
	stopAt := hi
	if first && head.res.Verdict == property.VerdictViolation {
		stopAt = lo
	}
	results := []sweepResult{head}
	done, total := 1, hi-lo+1
	lastReport := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if next > stopAt || next > hi {
					mu.Unlock()
					return
				}
				seed := next
				next++
				mu.Unlock()

				cfg := base
				cfg.Seed = seed
				res, err := scenarios.Run(name, cfg)

				mu.Lock()
				results = append(results, sweepResult{seed: seed, res: res, err: err})
				done++
				if first && res.Verdict == property.VerdictViolation && seed < stopAt {
					stopAt = seed
				}
				if time.Since(lastReport) > time.Second || uint64(done) == total {
					lastReport = time.Now()
					fmt.Fprintf(progress, "\rsweep %s: %d/%d seeds", name, done, total)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if total > 1 {
		fmt.Fprintln(progress)
	}
	sort.Slice(results, func(i, j int) bool { return results[i].seed < results[j].seed })
	if first {
		kept := results[:0]
		for _, r := range results {
			if r.seed <= stopAt {
				kept = append(kept, r)
			}
		}
		results = kept
	}
	return results
}

func printSweep(w io.Writer, sum sweepJSON, results []sweepResult, bugs string) {
	fmt.Fprintf(w, "scenario %s  bugs %s  runs %d  violations %d  unknown %d\n", sum.Scenario, bugs, sum.Runs, sum.Violations, sum.Unknown)
	fmt.Fprintf(w, "rate     %.1f seeds/s  %.0f events/s  %.0fx virtual/wall\n", sum.SeedsPerSec, sum.EventsPerSec, sum.VirtualPerWall)
	if sum.Violations == 0 {
		return
	}
	props := slices.Sorted(maps.Keys(sum.Properties))
	fmt.Fprintf(w, "%-32s %8s %12s\n", "property", "runs", "first seed")
	for _, p := range props {
		firstSeed := uint64(0)
		for _, r := range results {
			if r.res.Verdict == property.VerdictViolation && r.res.Property == p {
				firstSeed = r.seed
				break
			}
		}
		fmt.Fprintf(w, "%-32s %8d %12d\n", p, sum.Properties[p], firstSeed)
	}
	for _, r := range results {
		if r.res.Verdict == property.VerdictViolation {
			cfg := scenarios.Config{Seed: r.seed, Bugs: r.res.Bugs}
			fmt.Fprintf(w, "replay   %s\n", replayCommand(r.res, cfg, ""))
			break
		}
	}
}
