package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"slices"
	"time"

	"shardsim/property"
)

const aboutMerge = `Combines the JSON results of a sharded sweep (each shard's -json output or
-out file) into exactly the summary one machine sweeping the whole range would
have printed: runs, violations, undecided runs, groups with their fastest
seeds and replay commands, failing and undecided seeds, and the runs'
fingerprint (equal fingerprints: the same runs, seed for seed). Only the rate
line differs: each shard ran on its own machine.

Every shard of the sweep must be given once, all from the same sweep
(scenario, seeds, bugs, options, check budget); an interrupted shard is
refused (run it again), except after a shard that stopped at a failure under
-first, since one machine would have stopped there too. The exit status is
the merged sweep's.`

func cmdMerge(e *env, args []string) (int, error) {
	fs := newFlagSet("merge")
	asJSON := fs.Bool("json", false, "print the merged result as one JSON object on stdout, the text summary on stderr")
	out := fs.String("out", "", "also write the merged JSON result to `FILE`")
	if err := parseInterleaved(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() == 0 {
		return 0, usagef("merge: want the JSON result of every shard (simrun merge FILE...)")
	}
	var shards []*sweepSummary
	for _, path := range fs.Args() {
		s, err := loadSummary(path)
		if err != nil {
			return 0, err
		}
		shards = append(shards, s)
	}
	sum, err := mergeSummaries(shards)
	if err != nil {
		return 0, err
	}
	text := e.stdout
	if *asJSON {
		text = e.stderr
	}
	printSummary(text, sum)
	printMachine(text, sum)
	if *out != "" {
		if err := writeJSONFile(*out, sum); err != nil {
			return 0, usagef("merge: -out: %v", err)
		}
	}
	if *asJSON {
		writeJSON(e.stdout, sum)
	}
	return sum.exitStatus(), nil
}

// loadSummary reads one shard's result (a file holding the JSON object,
// possibly after other lines, as -json output captured with the text).
func loadSummary(path string) (*sweepSummary, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("merge: %v", err)
	}
	if i := bytes.LastIndex(data, []byte("\n{")); i >= 0 && !bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		data = data[i+1:]
	}
	var s sweepSummary
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, usagef("merge: %s is not a sweep result: %v", path, err)
	}
	if s.Format != sweepFormat {
		return nil, usagef("merge: %s is not a sweep result (format %q, want %q)", path, s.Format, sweepFormat)
	}
	return &s, nil
}

// mergeSummaries combines every shard of one sweep, in shard order.
func mergeSummaries(shards []*sweepSummary) (*sweepSummary, error) {
	if err := checkShards(shards); err != nil {
		return nil, err
	}
	slices.SortFunc(shards, func(a, b *sweepSummary) int { return a.Shard.Index - b.Shard.Index })
	head := shards[0]
	timeout, _ := time.ParseDuration(head.CheckTimeout)
	spec := replaySpec{scenario: head.Scenario, bugs: head.bugSet(), options: head.Options, checkTimeout: timeout}
	sum := &sweepSummary{Format: sweepFormat, Scenario: head.Scenario, Bugs: head.Bugs, Options: head.Options,
		CheckTimeout: head.CheckTimeout, First: head.First, Seeds: head.Seeds, Complete: true, Merged: len(shards),
		Properties: map[property.Name]uint64{}, Undecided: []undecidedJSON{}}
	var fp [32]byte
	var gs groups
	var covered []string
	for _, s := range shards {
		if !s.Complete {
			return nil, usagef("merge: shard %d/%d was stopped by %s after seeds %s: run it again (-shard %d/%d)",
				s.Shard.Index, s.Shard.Count, orNone(s.Interrupted), orNone(s.Covered), s.Shard.Index, s.Shard.Count)
		}
		sum.Runs += s.Runs
		sum.Violations += s.Violations
		sum.Unknown += s.Unknown
		sum.Events += s.Events
		sum.VirtualNs += s.VirtualNs
		for p, n := range s.Properties {
			sum.Properties[p] += n
		}
		if sum.FirstViolationSeed == nil && s.FirstViolationSeed != nil {
			sum.FirstViolationSeed, sum.Property = s.FirstViolationSeed, s.Property
		}
		for _, g := range s.Groups {
			gs.merge(g)
		}
		sum.Undecided = append(sum.Undecided, s.Undecided...)
		b, err := hex.DecodeString(s.Fingerprint)
		if err != nil || len(b) != 32 {
			return nil, usagef("merge: shard %d/%d has a malformed fingerprint", s.Shard.Index, s.Shard.Count)
		}
		xorInto(&fp, [32]byte(b))
		if s.Covered != "" {
			covered = append(covered, s.Covered)
		}
		if s.First && s.FirstViolationSeed != nil {
			break // one machine would have stopped here
		}
	}
	if len(covered) > 0 {
		a, _ := parseSeedRange(covered[0])
		b, _ := parseSeedRange(covered[len(covered)-1])
		sum.Covered = seedRange{a.lo, b.hi}.String()
	}
	sum.Fingerprint = hex.EncodeToString(fp[:])
	sum.Groups = gs.sorted(func(seed uint64) string {
		s := spec
		s.seed = seed
		return s.command()
	})
	markKnown(sum.Groups)
	sum.FailingSeeds = []uint64{}
	for _, g := range sum.Groups {
		sum.FailingSeeds = append(sum.FailingSeeds, g.Seeds...)
	}
	slices.Sort(sum.FailingSeeds)
	return sum, nil
}

// checkShards requires one result per shard of one sweep.
func checkShards(shards []*sweepSummary) error {
	head := shards[0]
	if head.Shard == nil {
		return usagef("merge: the first result is not a shard's (it has no shard); a whole sweep needs no merge")
	}
	seen := make([]bool, head.Shard.Count)
	all, err := parseSeedRange(head.Seeds)
	if err != nil {
		return usagef("merge: seeds %q: %v", head.Seeds, err)
	}
	for _, s := range shards {
		if s.Shard == nil || s.Shard.Count != head.Shard.Count {
			return usagef("merge: the results come from different shardings (want every shard of %d)", head.Shard.Count)
		}
		if s.Scenario != head.Scenario || s.Seeds != head.Seeds || !slices.Equal(s.Bugs, head.Bugs) ||
			fmtOverrides(s.Options) != fmtOverrides(head.Options) || s.CheckTimeout != head.CheckTimeout || s.First != head.First {
			return usagef("merge: shard %d/%d comes from another sweep (scenario, seeds, bugs, options, -check-timeout or -first differ)", s.Shard.Index, s.Shard.Count)
		}
		i := s.Shard.Index
		if i < 0 || i >= len(seen) || seen[i] {
			return usagef("merge: shard %d/%d is given twice or out of range", i, s.Shard.Count)
		}
		seen[i] = true
		want := "none"
		if r, ok := all.shard(i, s.Shard.Count); ok {
			want = r.String()
		}
		if s.Shard.Seeds != want {
			return usagef("merge: shard %d/%d ran seeds %s, but that shard of %s is %s", i, s.Shard.Count, s.Shard.Seeds, all, want)
		}
	}
	for i, ok := range seen {
		if !ok {
			return usagef("merge: shard %d/%d is missing (every shard of the sweep is needed)", i, len(seen))
		}
	}
	return nil
}
