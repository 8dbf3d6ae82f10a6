package main

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/zeebo/blake3"

	"shardsim/model/bugs"
	"shardsim/property"
	"shardsim/scenarios"
)

// sweepFormat names the JSON of a sweep result, which merge reads back.
const sweepFormat = "simrun sweep v1"

// sweepSummary is a sweep's result: `simrun sweep -json` prints it, a shard
// writes it with -out, and `simrun merge` combines shards' into the one a
// single machine would have printed. Everything but the fields marked
// "this machine" is a function of the runs alone.
type sweepSummary struct {
	Format       string            `json:"format"`
	Scenario     string            `json:"scenario"`
	Bugs         []string          `json:"bugs"`
	Options      map[string]string `json:"options"`
	CheckTimeout string            `json:"check_timeout"`
	First        bool              `json:"first"` // stop at the lowest failing seed
	Seeds        string            `json:"seeds"` // the whole sweep's range
	Shard        *shardJSON        `json:"shard,omitempty"`

	Covered     string `json:"covered"`               // the seeds actually run: a prefix of the range
	Complete    bool   `json:"complete"`              // every seed of the range (or shard) ran, or -first stopped at a failure
	Interrupted string `json:"interrupted,omitempty"` // the signal that stopped the sweep early

	Runs               uint64                   `json:"runs"`
	Violations         uint64                   `json:"violations"`
	Unknown            uint64                   `json:"unknown"`
	FirstViolationSeed *uint64                  `json:"first_violation_seed"`
	Property           property.Name            `json:"property"` // the first violation's
	Properties         map[property.Name]uint64 `json:"properties"`
	Groups             []group                  `json:"groups"`
	FailingSeeds       []uint64                 `json:"failing_seeds"`
	Undecided          []undecidedJSON          `json:"unknown_seeds"`
	Fingerprint        string                   `json:"fingerprint"` // XOR of blake3(seed, digest) over every run: equal sweeps, seed for seed
	Events             uint64                   `json:"events"`
	VirtualNs          int64                    `json:"virtual_ns"`

	// This machine: how fast it went and what it saved.
	WallSeconds    float64  `json:"wall_seconds"`
	SeedsPerSec    float64  `json:"seeds_per_sec"`
	EventsPerSec   float64  `json:"events_per_sec"`
	VirtualPerWall float64  `json:"virtual_per_wall"`
	CorpusDir      string   `json:"corpus_dir,omitempty"`
	Saved          []string `json:"saved,omitempty"`
	NotSaved       uint64   `json:"not_saved,omitempty"` // failing runs past -max-saved
	Merged         int      `json:"merged,omitempty"`    // shard results merged into this one
}

type shardJSON struct {
	Index  int    `json:"index"` // from 0
	Count  int    `json:"count"`
	Seeds  string `json:"seeds"`  // this shard's part of the range
	Source string `json:"source"` // where the shard came from: -shard, TEST_SHARD_INDEX, ...
}

type undecidedJSON struct {
	Seed     uint64        `json:"seed"`
	Property property.Name `json:"property"`
	Detail   string        `json:"detail"`
	Replay   string        `json:"replay"`
}

// accumulator builds a summary from runs given in seed order.
type accumulator struct {
	sum    *sweepSummary
	fp     [32]byte
	groups groups
	spec   replaySpec
	first  uint64 // the first seed covered
	last   uint64 // the last seed covered
}

func newAccumulator(name string, base scenarios.Config, seeds seedRange, first bool) *accumulator {
	sum := &sweepSummary{Format: sweepFormat, Scenario: name, Bugs: append([]string{}, base.Bugs.Names()...),
		Options: base.Options, CheckTimeout: fmt.Sprint(base.CheckTimeout), First: first, Seeds: seeds.String(),
		Properties: map[property.Name]uint64{}}
	if sum.Options == nil {
		sum.Options = map[string]string{}
	}
	return &accumulator{sum: sum, spec: specOf(name, base, "")}
}

// add counts one run (runs come in ascending seed order).
func (a *accumulator) add(seed uint64, res scenarios.Result) {
	s := a.sum
	if s.Runs == 0 {
		a.first = seed
	}
	a.last = seed
	s.Runs++
	s.Events += res.Events
	s.VirtualNs += res.VirtualNs
	xorInto(&a.fp, runPrint(seed, res.Digest))
	switch res.Verdict {
	case property.VerdictViolation:
		s.Violations++
		s.Properties[res.Property]++
		if s.FirstViolationSeed == nil {
			first := seed
			s.FirstViolationSeed, s.Property = &first, res.Property
		}
		a.groups.add(failure{Seed: seed, Property: res.Property, Signature: bugSignature(a.sum.Bugs),
			VirtualNs: res.VirtualNs, Events: res.Events, Digest: res.Digest, Detail: res.Detail})
	case property.VerdictUnknown:
		s.Unknown++
		spec := a.spec
		spec.seed = seed
		spec.checkTimeout = 4 * a.spec.checkTimeout
		s.Undecided = append(s.Undecided, undecidedJSON{Seed: seed, Property: res.Property, Detail: res.Detail, Replay: spec.command()})
	}
}

// finish fills the derived fields.
func (a *accumulator) finish() *sweepSummary {
	s := a.sum
	if s.Runs > 0 {
		s.Covered = seedRange{a.first, a.last}.String()
	}
	s.Fingerprint = hex.EncodeToString(a.fp[:])
	s.Groups = a.groups.sorted(func(seed uint64) string {
		spec := a.spec
		spec.seed = seed
		return spec.command()
	})
	s.FailingSeeds = []uint64{}
	for _, g := range s.Groups {
		s.FailingSeeds = append(s.FailingSeeds, g.Seeds...)
	}
	slices.Sort(s.FailingSeeds)
	if s.Undecided == nil {
		s.Undecided = []undecidedJSON{}
	}
	return s
}

// runPrint is one run's contribution to a sweep's fingerprint.
func runPrint(seed uint64, digest string) [32]byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], seed)
	return blake3.Sum256(append(b[:], digest...))
}

func xorInto(dst *[32]byte, x [32]byte) {
	for i := range dst {
		dst[i] ^= x[i]
	}
}

// textCap is how many failing seeds the text summary lists per group.
const textCap = 20

// printSummary writes the text summary: everything in it is a function of
// the runs, so a merged sweep prints exactly what one machine would have.
func printSummary(w io.Writer, s *sweepSummary) {
	bugsText := strings.Join(s.Bugs, ",")
	if bugsText == "" {
		bugsText = "none"
	}
	fmt.Fprintf(w, "scenario %s  bugs %s  seeds %s  runs %d  violations %d  unknown %d\n",
		s.Scenario, bugsText, s.Seeds, s.Runs, s.Violations, s.Unknown)
	if len(s.Options) > 0 {
		fmt.Fprintf(w, "options  %s\n", fmtOverrides(s.Options))
	}
	if s.Shard != nil {
		fmt.Fprintf(w, "shard    %d/%d: seeds %s (from %s)\n", s.Shard.Index, s.Shard.Count, s.Shard.Seeds, s.Shard.Source)
	}
	if s.Interrupted != "" {
		fmt.Fprintf(w, "stopped  by %s after seeds %s of %s (%s)\n", s.Interrupted, orNone(s.Covered), s.Seeds, resumeHint(s))
	}
	if s.First && s.FirstViolationSeed != nil {
		fmt.Fprintf(w, "first    stopped at the lowest failing seed, %d (-first)\n", *s.FirstViolationSeed)
	}
	if len(s.Groups) > 0 {
		fmt.Fprintln(w, "groups   (property, bug signature: runs, fastest-failing seed, its replay)")
		for _, g := range s.Groups {
			status := ""
			if g.Status != "" {
				status = "  [" + g.Status + "]"
			}
			fmt.Fprintf(w, "  %s  %s%s  %d runs\n", g.Property, g.Signature, status, g.Runs)
			fmt.Fprintf(w, "      fastest seed %d (virtual %s, %d events): %s\n", g.Fastest.Seed, fmtNs(g.Fastest.VirtualNs), g.Fastest.Events, g.Shape)
			fmt.Fprintf(w, "      replay %s\n", g.Replay)
			fmt.Fprintf(w, "      seeds  %s\n", capSeeds(g.Seeds, textCap))
		}
	}
	if len(s.Undecided) > 0 {
		fmt.Fprintf(w, "unknown  %d seeds could not be decided within -check-timeout %s; each replays with a larger budget:\n", len(s.Undecided), s.CheckTimeout)
		for _, u := range s.Undecided {
			fmt.Fprintf(w, "  seed %d %s: %s\n      replay %s\n", u.Seed, u.Property, u.Detail, u.Replay)
		}
	}
	fmt.Fprintf(w, "runs     fingerprint %s\n", s.Fingerprint[:32])
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// resumeHint says which seeds are left after an interruption.
func resumeHint(s *sweepSummary) string {
	r, err := parseSeedRange(s.Seeds)
	if s.Shard != nil {
		r, err = parseSeedRange(s.Shard.Seeds)
	}
	if err != nil {
		return ""
	}
	if s.Covered != "" {
		c, _ := parseSeedRange(s.Covered)
		if c.hi == r.hi {
			return "nothing left"
		}
		r.lo = c.hi + 1
	}
	return "the rest: -seeds " + r.String()
}

// capSeeds lists up to n seeds and counts the rest.
func capSeeds(seeds []uint64, n int) string {
	var b strings.Builder
	for i, s := range seeds {
		if i == n {
			fmt.Fprintf(&b, " … and %d more (-json lists them all)", len(seeds)-n)
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, s)
	}
	return b.String()
}

// fmtOverrides renders -opt overrides as name=value, sorted.
func fmtOverrides(opts map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		parts = append(parts, k+"="+opts[k])
	}
	return strings.Join(parts, " ")
}

// printMachine writes what depends on this machine: the rate and the saves.
func printMachine(w io.Writer, s *sweepSummary) {
	if s.Merged > 0 {
		fmt.Fprintf(w, "merged   %d shard results\n", s.Merged)
	} else {
		fmt.Fprintf(w, "rate     %.1f seeds/s  %.0f events/s  %.0fx virtual/wall  (%.1fs)\n", s.SeedsPerSec, s.EventsPerSec, s.VirtualPerWall, s.WallSeconds)
	}
	if len(s.Saved) > 0 || s.NotSaved > 0 {
		fmt.Fprintf(w, "saved    %d failing runs under %s", len(s.Saved), s.CorpusDir)
		if s.NotSaved > 0 {
			fmt.Fprintf(w, "; %d more not saved (-max-saved)", s.NotSaved)
		}
		fmt.Fprintln(w)
	}
}

// exitStatus is a sweep's exit status: a violation wins, then an
// interruption (the sweep is not a pass), then an undecided run.
func (s *sweepSummary) exitStatus() int {
	switch {
	case s.Violations > 0:
		return exitViolation
	case s.Interrupted == "SIGTERM":
		return exitSIGTERM
	case s.Interrupted != "":
		return exitSIGINT
	case s.Unknown > 0:
		return exitUnknown
	}
	return exitOK
}

// bugSet parses the summary's bugs back (they were valid when written).
func (s *sweepSummary) bugSet() bugs.Set {
	set, _ := bugs.Parse(s.Bugs...)
	return set
}
