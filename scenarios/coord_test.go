package scenarios

import (
	"slices"
	"strings"
	"testing"

	"shardsim/model/bugs"
	"shardsim/property"
)

var coordScenarios = []string{"coord", "coord-zombie"}

// With every bug off, both coordination scenarios pass a sweep, and the
// sweep really exercised what the checkers are there for: lost and
// ambiguous requests, crashes or pauses turned into fenced-out zombies,
// stalled tasks, refused client mistakes, splits, parks and published
// effects.
func TestCoordSweepsPass(t *testing.T) {
	seeds := 300
	if testing.Short() {
		seeds = 50
	}
	for _, name := range coordScenarios {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // independent worlds: parallelism cannot change a run
			totals := map[string]int64{}
			for s := 1; s <= seeds; s++ {
				res, err := Run(name, Config{Seed: uint64(s)})
				if err != nil {
					t.Fatal(err)
				}
				if res.Verdict != property.VerdictOK {
					t.Fatalf("seed %d: %s %s: %s", s, res.Verdict, res.Property, res.Detail)
				}
				for _, st := range res.Stats {
					totals[st.Name] += st.Value
				}
			}
			t.Logf("%d seeds passed; totals %v", seeds, totals)
			for _, c := range []string{"lost_requests", "lost_responses", "indeterminate", "op_ambiguous", "fenced_out",
				"refused_stale_fence", "stalls", "effects", "op_split_replace", "op_split_residual", "op_park", "op_unpark",
				"refused_cursor_regression", "refused_tenant_mismatch", "refused_op_id_reused_with_a_different_payload"} {
				if totals[c] == 0 {
					t.Errorf("no run counted %s: the sweep did not exercise it", c)
				}
			}
		})
	}
}

// A recorded run, failing or not, replays draw for draw from its bytes.
func TestCoordRecordingReplays(t *testing.T) {
	for _, c := range []struct {
		name string
		bug  string
	}{{"coord", ""}, {"coord-zombie", ""}, {"coord-zombie", bugs.CoordNoFenceCheck}, {"coord", bugs.CoordSplitTwoTxns}} {
		for s := uint64(1); s <= 5; s++ {
			cfg := Config{Seed: s, Record: true, Bugs: bugs.MustParse(c.bug)}
			orig, err := Run(c.name, cfg)
			if err != nil {
				t.Fatal(err)
			}
			replay, err := Run(c.name, Config{Choices: orig.Recording, Bugs: cfg.Bugs})
			if err != nil {
				t.Fatal(err)
			}
			if replay.Digest != orig.Digest || replay.Verdict != orig.Verdict || replay.Property != orig.Property {
				t.Fatalf("%s %s seed %d: replay %s %s %s, seeded %s %s %s", c.name, c.bug, s,
					replay.Verdict, replay.Property, replay.Digest, orig.Verdict, orig.Property, orig.Digest)
			}
		}
	}
}

// The quiet stream (no faults, smallest values) is a passing run.
func TestCoordQuietRunPasses(t *testing.T) {
	for _, name := range coordScenarios {
		res, err := Run(name, Config{Choices: []byte{}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != property.VerdictOK || res.Stat("effects") == 0 {
			t.Fatalf("%s quiet run: %s %s %s (effects %d)", name, res.Verdict, res.Property, res.Detail, res.Stat("effects"))
		}
	}
}

func TestCoordRejectsForeignBugsAndOptions(t *testing.T) {
	if _, err := Run("coord", Config{Seed: 1, Bugs: bugs.MustParse(bugs.KVPhantomAck)}); err == nil || !strings.Contains(err.Error(), "does not apply") {
		t.Fatalf("kv bug accepted by coord: %v", err)
	}
	if _, err := Run("coord-zombie", Config{Seed: 1, Options: map[string]string{"nope": "1"}}); err == nil || !strings.Contains(err.Error(), "no option") {
		t.Fatalf("unknown option accepted: %v", err)
	}
	if _, err := Run("coord", Config{Seed: 1, Options: map[string]string{"workers": "many"}}); err == nil {
		t.Fatal("bad option value accepted")
	}
	res, err := Run("coord", Config{Seed: 1, Options: map[string]string{"workers": "3", "stall": "0.5"}})
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Swarm.String(); !strings.Contains(s, "workers=3") || !strings.Contains(s, "stall=0.5") {
		t.Fatalf("overrides not applied: %s", s)
	}
}

// C.Convergence fails in a whole run: far more work than the bound after
// the heal lets the workers finish. (Workers are busy throughout, so
// C.EventuallyLeased, which only counts time some worker was free, holds.)
func TestCoordNonConvergenceIsCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("a long run")
	}
	res, err := Run("coord", Config{Seed: 3, Options: map[string]string{"keys": "20000"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != property.VerdictViolation || res.Property != property.CConvergence {
		t.Fatalf("got %s %s: %s", res.Verdict, res.Property, res.Detail)
	}
}

// A violation's report lists the requests on the shard it names.
func TestCoordViolationTailIsAboutTheShard(t *testing.T) {
	for s := uint64(1); s <= 100; s++ {
		res, err := Run("coord-zombie", Config{Seed: s, Bugs: bugs.MustParse(bugs.CoordNoFenceCheck)})
		if err != nil {
			t.Fatal(err)
		}
		name := shardInDetail.FindString(res.Detail)
		if res.Verdict != property.VerdictViolation || name == "" {
			continue
		}
		if len(res.Tail) < 2 || res.Tail[len(res.Tail)-1].Kind != "violation" {
			t.Fatalf("seed %d: tail %v", s, res.Tail)
		}
		for _, r := range res.Tail[:len(res.Tail)-1] {
			if !strings.Contains(r.Detail, name) {
				t.Fatalf("seed %d: tail record %q is not about %s", s, r.Detail, name)
			}
		}
		return
	}
	t.Fatal("coord.no-fence-check never named a shard in 100 seeds")
}

// Every property the coordination scenarios judge is shown to fail: by a
// registered bug that a coord sweep catches (TestBugTable runs it), or by
// hand-built histories in checker/coordcheck and
// TestCoordNonConvergenceIsCaught.
func TestEveryCoordPropertyCanFail(t *testing.T) {
	handBuilt := []property.Name{property.CRecordInvariants, property.CCooldown, property.CEventuallyLeased, property.CConvergence}
	for _, p := range coordProperties {
		if !property.Known(p) {
			t.Errorf("%s is not in the property catalog", p)
		}
		if slices.Contains(handBuilt, p) {
			continue
		}
		found := false
		for _, b := range bugs.ForProtocol("coord") {
			found = found || slices.Contains(b.Properties, p) && slices.Contains(coordScenarios, b.Scenario)
		}
		if !found {
			t.Errorf("no coord bug names %s: nothing shows its checker can fail", p)
		}
	}
}
