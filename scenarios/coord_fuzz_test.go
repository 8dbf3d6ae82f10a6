package scenarios

import (
	"os"
	"testing"
	"time"

	"shardsim/model/bugs"
	"shardsim/property"
)

// FuzzCoordination feeds the fuzzer's bytes to a coordination scenario as
// its choice stream, so `go test -fuzz FuzzCoordination ./scenarios/`
// explores schedules, fault mixes and client mistakes, and the minimiser
// shrinks a failing input towards the quiet all-zero stream.
//
// SHARDSIM_FUZZ_BUG names a bug to switch on (the fuzzer then hunts for a
// run that exposes it), and SHARDSIM_FUZZ_SCENARIO a scenario (default: the
// bug's registered scenario, else coord). The seed corpus holds the quiet
// stream and the recordings of a few seeded runs that pass: mutating a whole
// run's stream starts the fuzzer from realistic schedules. A failing input
// replays with `simrun run -scenario NAME -choices FILE [-bug NAME]`.
func FuzzCoordination(f *testing.F) {
	set, err := bugs.Parse(os.Getenv("SHARDSIM_FUZZ_BUG"))
	if err != nil {
		f.Fatal(err)
	}
	scenario := os.Getenv("SHARDSIM_FUZZ_SCENARIO")
	if scenario == "" {
		scenario = "coord"
		if names := set.Names(); len(names) > 0 {
			b, _ := bugs.Lookup(names[0])
			scenario = b.Scenario
		}
	}
	f.Add([]byte{})
	for s := uint64(1); s <= 3; s++ {
		res, err := Run(scenario, Config{Seed: s, Bugs: set, Record: true})
		if err != nil {
			f.Fatal(err)
		}
		if res.Verdict == property.VerdictOK {
			f.Add(res.Recording)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// An undecided run (porcupine ran out of time) fails like a
		// violation: it is a finding to look at, not a pass. The budget is
		// the default one, so only a history that is really hard to decide
		// ends up here.
		res, err := Run(scenario, Config{Choices: data, Bugs: set, CheckTimeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != property.VerdictOK {
			t.Fatalf("%s %s: %s (replay: simrun run -scenario %s -choices FILE%s)", res.Verdict, res.Property, res.Detail, scenario, bugFlags(set))
		}
	})
}

// bugFlags renders a bug set as simrun flags.
func bugFlags(set bugs.Set) string {
	s := ""
	for _, n := range set.Names() {
		s += " -bug " + n
	}
	return s
}
