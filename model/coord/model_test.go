package coord

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"slices"
	"testing"

	"pgregory.net/rapid"
	"shardsim/model/bugs"
)

// TestRandomHistories drives the reference with random operation
// sequences (several workers, zombies, splits, parks, unparks, claims) and
// checks after every step the safety properties that concern stored state:
// record invariants, legal succession of every record, zombie rejection,
// split atomicity and coverage of every root's range by its unsplit
// descendants.
func TestRandomHistories(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) { randomHistory(rt, DefaultConfig()) })
}

// TestRandomHistoriesDetectBugs shows that the checks above can fail: with
// a bug on, the same random histories find a violation.
func TestRandomHistoriesDetectBugs(t *testing.T) {
	// No fail files, little shrinking, and enough checks that a miss is
	// vanishingly unlikely (the run stops at the first violation).
	for name, v := range map[string]string{"rapid.nofailfile": "true", "rapid.shrinktime": "10ms", "rapid.checks": "2000"} {
		old := flag.Lookup(name).Value.String()
		if err := flag.Set(name, v); err != nil {
			t.Fatal(err)
		}
		defer flag.Set(name, old)
	}
	for _, name := range []string{
		bugs.CoordSplitGap, bugs.CoordCursorOutOfBounds, bugs.CoordNoFenceCheck, bugs.CoordCursorRegression,
		bugs.CoordAcquireTerminal, bugs.CoordCompleteKeepsLease, bugs.CoordUnparkDone,
	} {
		t.Run(name, func(t *testing.T) {
			rec := &recordingTB{name: t.Name()}
			func() {
				defer func() {
					if p := recover(); p != nil && p != errRecordedFailure {
						panic(p)
					}
				}()
				rapid.Check(rec, func(rt *rapid.T) { randomHistory(rt, cfgWith(name)) })
			}()
			if !rec.failed {
				t.Fatal("no violation found")
			}
			t.Log(rec.first)
		})
	}
}

// recordingTB lets a test expect a rapid property to fail.
type recordingTB struct {
	name   string
	failed bool
	first  string
}

var errRecordedFailure = &struct{ string }{"recorded failure"}

func (r *recordingTB) Helper()              {}
func (r *recordingTB) Name() string         { return r.name }
func (r *recordingTB) Logf(string, ...any)  {}
func (r *recordingTB) Log(...any)           {}
func (r *recordingTB) Skipf(string, ...any) {}
func (r *recordingTB) Skip(...any)          {}
func (r *recordingTB) SkipNow()             {}
func (r *recordingTB) Errorf(f string, a ...any) {
	if !r.failed {
		r.first = fmt.Sprintf(f, a...)
	}
	r.failed = true
}
func (r *recordingTB) Error(a ...any)            { r.Errorf("%s", fmt.Sprint(a...)) }
func (r *recordingTB) Fatalf(f string, a ...any) { r.Errorf(f, a...); panic(errRecordedFailure) }
func (r *recordingTB) Fatal(a ...any)            { r.Error(a...); panic(errRecordedFailure) }
func (r *recordingTB) FailNow()                  { r.failed = true; panic(errRecordedFailure) }
func (r *recordingTB) Fail()                     { r.failed = true }
func (r *recordingTB) Failed() bool              { return r.failed }

func randomHistory(rt *rapid.T, cfg Config) {
	{
		cfg.ClaimCooldown = LogicalDuration(rapid.Uint64Range(0, 3).Draw(rt, "cooldown"))
		r, err := NewReference(cfg)
		if err != nil {
			rt.Fatal(err)
		}
		roots := []InitialShard{{1, spec("", "h")}, {2, spec("h", "q")}, {3, spec("q", "")}}
		if _, _, err := createRunWithShards(r, 1, tenantA, run1, RunConfig{LeaseDuration: 5}, roots, 1); err != nil {
			rt.Fatal(err)
		}
		now := LogicalTime(1)
		nextOp := OpID(100)
		var leases []Lease // every lease ever granted: zombies included
		prev := snapshotShards(r)
		for step := 0; step < 60; step++ {
			now += LogicalTime(rapid.Uint64Range(0, 3).Draw(rt, "dt"))
			shards := sortedKeys(prev)
			// Mostly the newest lease of some shard (a live worker), else
			// any lease ever granted (a zombie or a stale retry).
			pickLease := func() (Lease, bool) {
				if len(leases) == 0 {
					return Lease{}, false
				}
				if rapid.IntRange(0, 3).Draw(rt, "zombie") == 0 {
					return leases[rapid.IntRange(0, len(leases)-1).Draw(rt, "lease")], true
				}
				newest := map[ShardID]Lease{}
				for _, l := range leases {
					newest[l.Shard] = l
				}
				ids := slices.Sorted(maps.Keys(newest))
				return newest[rapid.SampledFrom(ids).Draw(rt, "leased shard")], true
			}
			op := nextOp
			if rapid.IntRange(0, 9).Draw(rt, "retry") == 0 && nextOp > 100 {
				op = OpID(rapid.Uint64Range(100, uint64(nextOp-1)).Draw(rt, "old op"))
			} else {
				nextOp++
			}
			var gate Opt[Lease] // the lease an executed operation relied on
			var out Outcome
			var err error
			switch kind := rapid.IntRange(0, 9).Draw(rt, "kind"); kind {
			case 0, 1:
				id := rapid.SampledFrom(shards).Draw(rt, "shard")
				var res AcquireResult
				res, _, err = r.AcquireAndRestore(now, tenantA, ShardKey{run1, id}, WorkerID(rapid.IntRange(1, 3).Draw(rt, "worker")))
				if err == nil {
					leases = append(leases, res.Lease)
				}
			case 2:
				var res AcquireResult
				res, _, err = r.ClaimNextAvailable(now, tenantA, WorkerID(rapid.IntRange(1, 3).Draw(rt, "worker")))
				if err == nil {
					leases = append(leases, res.Lease)
				}
			case 3:
				if l, ok := pickLease(); ok {
					_, _, err = r.Renew(now, tenantA, l)
					gate, out = Some(l), Executed
				}
			case 4, 5:
				if l, ok := pickLease(); ok {
					out, _, err = r.Checkpoint(now, tenantA, l, Cursor{LastKey: randKey(rt, "key")}, op)
					gate = Some(l)
				}
			case 6:
				if l, ok := pickLease(); ok {
					if rapid.Bool().Draw(rt, "complete") {
						out, _, err = r.Complete(now, tenantA, l, Cursor{LastKey: randKey(rt, "key")}, op)
					} else {
						out, _, err = r.ParkShard(now, tenantA, l, ParkReason(rapid.Uint8Range(0, 4).Draw(rt, "reason")), op)
					}
					gate = Some(l)
				}
			case 7:
				if l, ok := pickLease(); ok {
					sp := prev[l.Shard].Spec
					cuts := randCuts(rt, sp)
					var res SplitReplaceResult
					if len(cuts) > 0 {
						pieces := piecesOf(sp, cuts)
						if len(pieces) > 2 && rapid.IntRange(0, 3).Draw(rt, "gap") == 0 {
							pieces = slices.Delete(pieces, 1, 2) // a plan with a gap
						}
						res, _, err = r.SplitReplace(now, tenantA, l, SplitReplacePlan{Children: pieces}, op)
						gate, out = Some(l), res.Outcome
					}
				}
			case 8:
				if l, ok := pickLease(); ok {
					sp := prev[l.Shard].Spec
					if cuts := randCuts(rt, sp); len(cuts) > 0 {
						plan := SplitResidualPlan{Parent: ShardSpec{Start: sp.Start, End: cuts[0]}, Residual: ShardSpec{Start: cuts[0], End: sp.End}}
						var res SplitResidualResult
						res, _, err = r.SplitResidual(now, tenantA, l, plan, op)
						gate, out = Some(l), res.Outcome
					}
				}
			case 9:
				id := rapid.SampledFrom(shards).Draw(rt, "shard")
				_, _, err = r.UnparkShard(now, tenantA, ShardKey{run1, id}, op)
			}
			cur := snapshotShards(r)
			checkHistoryStep(rt, prev, cur, roots)
			if g := gate; err == nil && g.Set && out == Executed {
				// C.ZombieRejection: an executed lease-gated operation ran
				// under the shard's current fence.
				if before := prev[g.Val.Shard]; before.Fence != g.Val.Fence {
					rt.Fatalf("step %d: accepted lease with fence %d on a shard at fence %d", step, g.Val.Fence, before.Fence)
				}
			}
			prev = cur
		}
	}
}

func snapshotShards(r *Reference) map[ShardID]ShardRecord {
	recs, _ := r.Shards()
	out := make(map[ShardID]ShardRecord, len(recs))
	for _, rec := range recs {
		out[rec.Shard] = rec
	}
	return out
}

func sortedKeys(m map[ShardID]ShardRecord) []ShardID {
	ks := make([]ShardID, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func randKey(t *rapid.T, label string) []byte {
	return []byte(rapid.StringMatching(`[a-z]{1,3}`).Draw(t, label))
}

// randCuts draws 1..3 distinct cut points strictly inside sp, in order.
func randCuts(t *rapid.T, sp ShardSpec) [][]byte {
	var cuts [][]byte
	for _, k := range rapid.SliceOfN(rapid.StringMatching(`[a-z]{1,3}`), 1, 3).Draw(t, "cuts") {
		kb := []byte(k)
		if sp.Contains(kb) && bytes.Compare(kb, sp.Start) > 0 && !slices.ContainsFunc(cuts, func(c []byte) bool { return bytes.Equal(c, kb) }) {
			cuts = append(cuts, kb)
		}
	}
	slices.SortFunc(cuts, bytes.Compare)
	return cuts
}

func piecesOf(sp ShardSpec, cuts [][]byte) []ShardSpec {
	var out []ShardSpec
	start := sp.Start
	for _, c := range cuts {
		out = append(out, ShardSpec{Start: start, End: c})
		start = c
	}
	return append(out, ShardSpec{Start: start, End: sp.End})
}

func checkHistoryStep(t *rapid.T, prev, cur map[ShardID]ShardRecord, roots []InitialShard) {
	for _, id := range sortedKeys(cur) {
		rec := cur[id]
		if err := rec.AssertInvariants(); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if old, ok := prev[id]; ok {
			if err := checkShardSuccession(&old, &rec); err != nil {
				t.Fatalf("%s: %v", id, err)
			}
		}
		// C.SplitAtomicity: spawned shards exist and name their parent;
		// derived shards are recorded by their parent.
		for _, c := range rec.Spawned {
			if child, ok := cur[c]; !ok || child.Parent != Some(id) {
				t.Fatalf("%s spawned %s which is missing or disowned", id, c)
			}
		}
		if rec.Parent.Set && !slices.Contains(cur[rec.Parent.Val].Spawned, id) {
			t.Fatalf("%s is not in its parent's spawned list", id)
		}
		if rec.Cursor.HasKey() && !rec.Spec.Contains(rec.Cursor.LastKey) && rec.Status == ShardActive {
			t.Fatalf("%s: cursor outside its range", id) // C.CursorBounds
		}
	}
	// C.SplitCoverage: each root's unsplit descendants partition its range.
	for _, root := range roots {
		var leaves []ShardSpec
		var walk func(ShardID)
		walk = func(id ShardID) {
			rec := cur[id]
			if rec.Status != ShardSplit {
				leaves = append(leaves, rec.Spec)
			}
			for _, c := range rec.Spawned {
				walk(c)
			}
		}
		walk(root.Shard)
		slices.SortFunc(leaves, func(a, b ShardSpec) int { return bytes.Compare(a.Start, b.Start) })
		if v := coverage(root.Spec, leaves, false); v != SplitOK {
			t.Fatalf("root %s: leaves %s: %v", root.Shard, fmtSpecs(leaves), v)
		}
	}
}

func fmtSpecs(specs []ShardSpec) string {
	s := ""
	for _, sp := range specs {
		s += fmt.Sprintf("[%q,%q) ", sp.Start, sp.End)
	}
	return s
}
