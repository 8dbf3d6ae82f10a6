package modelcheck

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"shardsim/model/bugs"
	"shardsim/scenarios"
	"shardsim/simclock"
)

// tinyCoord is the coord small world with a nemesis (pauses on, so its
// start and its quiet ticks are private events) and only the order of
// simultaneous events and the nemesis branching: a search of a second or
// two in which some states meet (the nemesis starting before or after the
// others at time zero).
func tinyCoord(t *testing.T) (map[string]string, Bounds) {
	t.Helper()
	p, err := LookupPreset("coord", "small")
	if err != nil {
		t.Fatal(err)
	}
	opts := with(p.Options, map[string]string{"pause": "0.02"})
	return opts, Bounds{Depth: 1, Values: 2, Faults: -1, Branch: Forks{"loop/order", "nemesis"}}
}

// coarseWorld is ScenarioWorld with an unsound fingerprint: virtual time
// alone, which merges states that differ in everything else.
func coarseWorld(name string, cfg scenarios.Config) World {
	return func(src simclock.Source, visit func(func() simclock.Digest) bool) (Outcome, error) {
		cfg.Explorer = &coarse{src: src, visit: visit}
		res, err := scenarios.Run(name, cfg)
		return Outcome{Property: string(res.Property), Cut: res.Cut}, err
	}
}

type coarse struct {
	src   simclock.Source
	visit func(func() simclock.Digest) bool
}

func (c *coarse) Begin(*simclock.Loop) simclock.Source { return c.src }

func (c *coarse) Visit(l *simclock.Loop) bool {
	var d simclock.Digest
	binary.LittleEndian.PutUint64(d[:], uint64(l.Now()))
	return c.visit(func() simclock.Digest { return d })
}

func TestScenarioPruningIsSound(t *testing.T) {
	opts, b := tinyCoord(t)
	world := ScenarioWorld("coord", scenarios.Config{Options: opts})
	p, f, same := agree(t, world, b, BFS)
	t.Logf("pruned: %d runs (%d cut), %d states, %d distinct; unpruned: %d runs, %d states, %d distinct",
		p.Runs, p.Pruned, p.States, p.Distinct, f.Runs, f.States, f.Distinct)
	if !same {
		t.Fatalf("pruning changed what the search saw: %d distinct %v against %d %v", p.Distinct, p.Violations, f.Distinct, f.Violations)
	}
	if p.Pruned == 0 {
		t.Fatal("nothing was pruned, so the comparison proves nothing")
	}
	p, f, same = agree(t, coarseWorld("coord", scenarios.Config{Options: opts}), b, BFS)
	if same {
		t.Fatalf("a fingerprint of the time alone went unnoticed: %d distinct against %d", p.Distinct, f.Distinct)
	}
}

// The searches a user runs find real bugs through the real scenario, and
// their witnesses replay through the bytes driver. coord.renew-misreports
// needs a renewal, which the small preset's two-unit lease makes one slow
// step of work away (with a ten-unit lease no task of the world renewed).
func TestScenarioSearchFindsABugAndItsWitnessReplays(t *testing.T) {
	p, err := LookupPreset("coord", "small")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		bug, property string
		depth         int
	}{
		{bugs.CoordCursorOutOfBounds, "C.CursorBounds", 1},
		{bugs.CoordRenewMisreports, "C.Linearizable", 1},
	} {
		set, _ := bugs.Parse(tc.bug)
		cfg := scenarios.Config{Options: p.Options, Bugs: set}
		rep, err := Search(ScenarioWorld("coord", cfg), p.Bounds, BFS)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Property != tc.property || rep.WitnessDepth() != tc.depth {
			t.Fatalf("%s: got %q at depth %d (%v), want %s at depth %d", tc.bug, rep.Property, rep.WitnessDepth(), Chosen(rep.Witness), tc.property, tc.depth)
		}
		cfg.Choices = Stream(rep.Witness)
		res, err := scenarios.Run("coord", cfg)
		if err != nil || string(res.Property) != rep.Property {
			t.Fatalf("%s: the witness replays to %q (%v), want %s", tc.bug, res.Property, err, rep.Property)
		}
	}
}

// A clean world passes a complete search.
func TestScenarioSearchPassesClean(t *testing.T) {
	opts, b := tinyCoord(t)
	b.Branch = Forks{"worker/*", "admin"}
	rep, err := Search(ScenarioWorld("coord", scenarios.Config{Options: opts}), b, BFS)
	if err != nil || rep.Property != "" || !rep.Complete {
		t.Fatalf("clean coord, depth 1: %+v %v", rep, err)
	}
	if rep.Distinct == 0 || rep.Runs < 10 {
		t.Fatalf("the search hardly ran: %+v", rep)
	}
}

// Why there is no symmetry reduction over workers (see the package doc):
// in a world symmetric under swapping w0 and w1, the runs that branch only
// w0's decisions would be the images of those that branch only w1's, the
// same number of runs and states. The coord world favours w0 (spawned
// first, so first among simultaneous events in the quiet order), and the
// two searches differ. If this test fails, the world may have become
// symmetric and the reduction worth reconsidering.
func TestWorkersAreNotInterchangeable(t *testing.T) {
	p, err := LookupPreset("coord", "small")
	if err != nil {
		t.Fatal(err)
	}
	world := ScenarioWorld("coord", scenarios.Config{Options: p.Options})
	var reps [2]Report
	for i, w := range []string{"worker/w0", "worker/w1"} {
		b := Bounds{Depth: 1, Values: 2, Faults: -1, Branch: Forks{w}}
		if reps[i], err = Search(world, b, BFS); err != nil {
			t.Fatal(err)
		}
		if reps[i].Runs < 10 {
			t.Fatalf("%s hardly branched: %d runs", w, reps[i].Runs)
		}
	}
	t.Logf("branching w0: %d runs, %d states; w1: %d runs, %d states", reps[0].Runs, reps[0].Distinct, reps[1].Runs, reps[1].Distinct)
	if reps[0].Runs == reps[1].Runs && reps[0].Distinct == reps[1].Distinct {
		t.Fatal("w0's and w1's decisions span searches of one size: the world may be symmetric in its workers")
	}
}

// eagerWorld is the slow path of the lazy digest: every event's state is
// digested, as if visit asked for it each time.
func eagerWorld(w World) World {
	return func(src simclock.Source, visit func(func() simclock.Digest) bool) (Outcome, error) {
		return w(src, func(state func() simclock.Digest) bool {
			d := state()
			return visit(func() simclock.Digest { return d })
		})
	}
}

// A world digests a state only past its run's prefix; digesting every
// state instead must change nothing the search reports.
func TestLazyDigestChangesNothing(t *testing.T) {
	opts, b := tinyCoord(t)
	b.Branch = Forks{"worker/*", "admin", "loop/order", "nemesis"}
	for _, bug := range []string{"", bugs.CoordCursorOutOfBounds} {
		set, _ := bugs.Parse(bug)
		world := ScenarioWorld("coord", scenarios.Config{Options: opts, Bugs: set})
		lazy, err := Search(world, b, BFS)
		if err != nil {
			t.Fatal(err)
		}
		eager, err := Search(eagerWorld(world), b, BFS)
		if err != nil {
			t.Fatal(err)
		}
		if lazy.States != eager.States || lazy.Distinct != eager.Distinct || lazy.Runs != eager.Runs || lazy.Pruned != eager.Pruned ||
			lazy.Property != eager.Property || lazy.WitnessStates != eager.WitnessStates {
			t.Fatalf("bug %q: lazy %+v, eager %+v", bug, lazy, eager)
		}
		if bug != "" && lazy.Property == "" {
			t.Fatalf("bug %q was not found, so the comparison proves less", bug)
		}
		t.Logf("bug %q: %d states, %d distinct, %d runs, %d pruned, %q", bug, lazy.States, lazy.Distinct, lazy.Runs, lazy.Pruned, lazy.Property)
	}
}

// A run takes over the folds of the run before it for as long as it makes
// that run's draws (simclock.FoldMemo). Hashing every fold instead must
// give every state the same digest, in the same order, and the searches
// the same reports. (Only coord is searched: migrate's runs branch only at
// draws made while the world is built, before its first fold, so they
// reuse none and the comparison would prove nothing. simclock's
// TestFoldReuse shows that a spoiled memo changes the digests.)
func TestFoldReuseChangesNothing(t *testing.T) {
	opts, tiny := tinyCoord(t)
	tiny.Branch = Forks{"worker/*", "admin", "loop/order", "nemesis"}
	small, err := LookupPreset("coord", "small")
	if err != nil {
		t.Fatal(err)
	}
	smallBounds := small.Bounds
	smallBounds.Max = 20_000
	type foldCase struct {
		scenario string
		opts     map[string]string
		b        Bounds
	}
	for _, c := range []foldCase{{"coord", opts, tiny}, {"coord", small.Options, smallBounds}} {
		world := ScenarioWorld(c.scenario, scenarios.Config{Options: c.opts})
		var memo *simclock.FoldMemo
		reused, reusedStates := searchDigests(t, func(src simclock.Source, visit func(func() simclock.Digest) bool) (Outcome, error) {
			memo = &src.(view).t.folds
			return world(src, visit)
		}, c.b)
		hashed, hashedStates := searchDigests(t, hashEveryFold(world), c.b)
		if reused.States != hashed.States || reused.Distinct != hashed.Distinct || reused.Runs != hashed.Runs || reused.Pruned != hashed.Pruned {
			t.Fatalf("%s: folds reused %+v, hashed %+v", c.scenario, reused, hashed)
		}
		if !slices.Equal(reusedStates, hashedStates) {
			t.Fatalf("%s: the state digests differ when every fold is hashed", c.scenario)
		}
		if memo.Recalled() == 0 {
			t.Fatalf("%s: no fold was reused, so the comparison proves nothing", c.scenario)
		}
		t.Logf("%s: %d runs, %d states, the same digests; %d folds reused", c.scenario, reused.Runs, len(reusedStates), memo.Recalled())
	}
}

// searchDigests searches world within b and lists the digest of every
// state visited, in order.
func searchDigests(t *testing.T, world World, b Bounds) (Report, []simclock.Digest) {
	t.Helper()
	var seen []simclock.Digest
	rep, err := Search(func(src simclock.Source, visit func(func() simclock.Digest) bool) (Outcome, error) {
		return world(src, func(state func() simclock.Digest) bool {
			return visit(func() simclock.Digest {
				d := state()
				seen = append(seen, d)
				return d
			})
		})
	}, b, BFS)
	if err != nil {
		t.Fatal(err)
	}
	return rep, seen
}

// hashEveryFold hides the tape from the world (ScenarioWorld reuses the
// folds of a tape's runs), so that every fold is hashed.
func hashEveryFold(world World) World {
	return func(src simclock.Source, visit func(func() simclock.Digest) bool) (Outcome, error) {
		return world(hiddenTape{src.(view)}, visit)
	}
}

// hiddenTape is a view of the tape under another type.
type hiddenTape struct{ view }

// The migrate small preset splits the client around the migration: its
// first operation at time zero, before the export, and the next from
// client_rest_until (230ms), after the cutover and before the target's
// promotion (see migrateRates). The quiet run shows both.
func TestMigratePresetSplitsTheClient(t *testing.T) {
	p, err := LookupPreset("migrate", "small")
	if err != nil {
		t.Fatal(err)
	}
	var trace bytes.Buffer
	if _, err := scenarios.Run("migrate", scenarios.Config{Options: p.Options, Choices: []byte{0}, TraceOut: &trace}); err != nil {
		t.Fatal(err)
	}
	var invokes []int64
	var cutover, promoted int64
	for _, line := range strings.Split(trace.String(), "\n") {
		var r struct {
			T      int64  `json:"t"`
			Kind   string `json:"kind"`
			Detail string `json:"detail"`
		}
		if json.Unmarshal([]byte(line), &r) != nil {
			continue
		}
		switch {
		case r.Kind == "op.invoke":
			invokes = append(invokes, r.T)
		case r.Kind == "mig.phase" && strings.Contains(r.Detail, "->CUTOVER"):
			cutover = r.T
		case r.Kind == "promote.done":
			promoted = r.T
		}
	}
	if len(invokes) != 4 || cutover == 0 || promoted == 0 {
		t.Fatalf("operations at %v, cutover at %d, promotion done at %d", invokes, cutover, promoted)
	}
	if invokes[0] != 0 || invokes[1] < int64(230*time.Millisecond) || invokes[1] <= cutover || invokes[3] >= promoted {
		t.Fatalf("operations at %v: want the first at 0 and the rest between the cutover (%d) and the promotion (%d)", invokes, cutover, promoted)
	}
}
