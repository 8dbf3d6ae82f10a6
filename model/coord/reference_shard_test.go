package coord

import (
	"fmt"
	"slices"
	"testing"
)

func forBackends(t *testing.T, f func(t *testing.T, b backend)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { f(t, b) })
	}
}

func TestAcquire(t *testing.T) {
	forBackends(t, func(t *testing.T, b backend) {
		t.Run("grants lease and raises fence", func(t *testing.T) {
			w := newWorld(t, b.make(t, DefaultConfig()))
			res, evs, err := w.c.AcquireAndRestore(w.now, tenantA, ShardKey{run1, 1}, w1)
			wantCode(t, err, codeNone)
			want := Lease{Tenant: tenantA, Run: run1, Shard: 1, Owner: w1, Fence: 2, Deadline: w.now + 10}
			if res.Lease != want {
				t.Fatalf("lease = %+v, want %+v", res.Lease, want)
			}
			if res.Snapshot.Status != ShardActive || !res.Snapshot.Spec.SameRange(spec("a", "m")) || res.Snapshot.Cursor.HasKey() {
				t.Fatalf("snapshot = %+v", res.Snapshot)
			}
			if len(evs) != 1 || evs[0].Kind != EventShardAcquired || evs[0].Fence != 2 || evs[0].Worker != w1 {
				t.Fatalf("events = %v", evs)
			}
		})
		t.Run("restores the last checkpoint", func(t *testing.T) {
			w := newWorld(t, b.make(t, DefaultConfig()))
			l := w.acquire(1, w1)
			_, _, err := w.c.Checkpoint(w.now, tenantA, l, Cursor{LastKey: bs("c"), Token: bs("tok")}, 1)
			wantCode(t, err, codeNone)
			w.now += 20 // lease expired
			res, _, err := w.c.AcquireAndRestore(w.now, tenantA, ShardKey{run1, 1}, w2)
			wantCode(t, err, codeNone)
			if !res.Snapshot.Cursor.Equal(Cursor{LastKey: bs("c"), Token: bs("tok")}) || res.Lease.Fence != 3 {
				t.Fatalf("restored %+v fence %d", res.Snapshot.Cursor, res.Lease.Fence)
			}
		})
		t.Run("live lease of another worker", func(t *testing.T) {
			w := newWorld(t, b.make(t, DefaultConfig()))
			w.acquire(1, w1)
			_, _, err := w.c.AcquireAndRestore(w.now+9, tenantA, ShardKey{run1, 1}, w2)
			wantCode(t, err, CodeAlreadyLeased)
			if ce := err.(*AcquireError); ce.At != w.now+10 {
				t.Fatalf("retry at %d", ce.At)
			}
			// At the deadline the lease has expired.
			_, _, err = w.c.AcquireAndRestore(w.now+10, tenantA, ShardKey{run1, 1}, w2)
			wantCode(t, err, codeNone)
		})
		// Seed 004: acquire needs the shard "Active and unleased (or lease
		// expired)". A live lease refuses its own holder too: a second
		// grant inside one lease window would raise the fence under the
		// first and break at-most-once for that window.
		t.Run("same worker is refused while its lease is live", func(t *testing.T) {
			w := newWorld(t, b.make(t, DefaultConfig()))
			old := w.acquire(1, w1)
			_, _, err := w.c.AcquireAndRestore(w.now+9, tenantA, ShardKey{run1, 1}, w1)
			wantCode(t, err, CodeAlreadyLeased)
			if r := w.record(1); r.Fence != old.Fence || r.AcquireCount != 1 {
				t.Fatalf("refused acquire changed the record: fence %d, acquires %d", r.Fence, r.AcquireCount)
			}
			_, _, err = w.c.Checkpoint(w.now, tenantA, old, cur("b"), 1)
			wantCode(t, err, codeNone)
			// Once the lease expired, the same worker re-acquires with a
			// new fence, and its old lease is fenced out.
			w.now += 10
			l := w.acquire(1, w1)
			if l.Fence != old.Fence+1 || w.record(1).AcquireCount != 2 {
				t.Fatalf("fence %d after %d, acquires %d", l.Fence, old.Fence, w.record(1).AcquireCount)
			}
			_, _, err = w.c.Checkpoint(w.now, tenantA, old, cur("c"), 2)
			wantCode(t, err, CodeStaleFence)
		})
		t.Run("unknown shard or other tenant", func(t *testing.T) {
			w := newWorld(t, b.make(t, DefaultConfig()))
			_, _, err := w.c.AcquireAndRestore(w.now, tenantA, ShardKey{run1, 7}, w1)
			wantCode(t, err, CodeShardNotFound)
			_, _, err = w.c.AcquireAndRestore(w.now, tenantB, ShardKey{run1, 1}, w1)
			wantCode(t, err, CodeShardNotFound)
		})
		t.Run("terminal shard", func(t *testing.T) {
			w := newWorld(t, b.make(t, DefaultConfig()))
			l := w.acquire(1, w1)
			_, _, err := w.c.Complete(w.now, tenantA, l, cur("b"), 1)
			wantCode(t, err, codeNone)
			_, _, err = w.c.AcquireAndRestore(w.now, tenantA, ShardKey{run1, 1}, w2)
			wantCode(t, err, CodeShardTerminal)
		})
	})
}

func TestRenew(t *testing.T) {
	forBackends(t, func(t *testing.T, b backend) {
		w := newWorld(t, b.make(t, DefaultConfig()))
		l := w.acquire(1, w1)
		res, evs, err := w.c.Renew(w.now+5, tenantA, l)
		wantCode(t, err, codeNone)
		if res.Deadline != w.now+15 || len(evs) != 1 || evs[0].Kind != EventShardLeaseRenewed {
			t.Fatalf("renew = %+v %v", res, evs)
		}
		if r := w.record(1); r.Fence != l.Fence || r.Lease.Val.Deadline != w.now+15 {
			t.Fatalf("record after renew: fence %d lease %+v", r.Fence, r.Lease)
		}
		// The renewed lease is valid past the original deadline.
		_, _, err = w.c.Checkpoint(w.now+12, tenantA, l, cur("b"), 1)
		wantCode(t, err, codeNone)

		for _, tc := range []struct {
			name   string
			now    LogicalTime
			tenant TenantID
			mut    func(*Lease)
			code   Code
		}{
			{"expired", w.now + 15, tenantA, func(*Lease) {}, CodeLeaseExpired},
			{"stale fence", w.now, tenantA, func(l *Lease) { l.Fence-- }, CodeStaleFence},
			{"other owner", w.now, tenantA, func(l *Lease) { l.Owner = w2 }, CodeOwnerMismatch},
			{"caller of another tenant", w.now, tenantB, func(*Lease) {}, CodeTenantMismatch},
			{"unknown shard", w.now, tenantA, func(l *Lease) { l.Shard = 9 }, CodeShardNotFound},
		} {
			t.Run(tc.name, func(t *testing.T) {
				bad := l
				tc.mut(&bad)
				_, _, err := w.c.Renew(tc.now, tc.tenant, bad)
				wantCode(t, err, tc.code)
			})
		}
	})
}

func TestCheckpoint(t *testing.T) {
	forBackends(t, func(t *testing.T, b backend) {
		for _, tc := range []struct {
			name  string
			first string // checkpoint before the one under test ("" none)
			next  Cursor
			code  Code
		}{
			{"first progress", "", cur("b"), codeNone},
			{"progress", "b", cur("c"), codeNone},
			{"same key", "b", Cursor{LastKey: bs("b"), Token: bs("t2")}, codeNone},
			{"range start", "", cur("a"), codeNone},
			{"no last key", "", Cursor{Token: bs("t")}, CodeCheckpointMissingKey},
			{"no last key after progress", "b", Cursor{}, CodeCheckpointMissingKey},
			{"regression", "c", cur("b"), CodeCursorRegression},
			{"below range", "", cur("0"), CodeCursorOutOfBounds},
			{"at range end", "", cur("m"), CodeCursorOutOfBounds},
			{"past range end", "b", cur("zz"), CodeCursorOutOfBounds},
		} {
			t.Run(tc.name, func(t *testing.T) {
				w := newWorld(t, b.make(t, DefaultConfig()))
				l := w.acquire(1, w1)
				if tc.first != "" {
					_, _, err := w.c.Checkpoint(w.now, tenantA, l, cur(tc.first), 1)
					wantCode(t, err, codeNone)
				}
				before := w.record(1)
				out, evs, err := w.c.Checkpoint(w.now, tenantA, l, tc.next, 2)
				wantCode(t, err, tc.code)
				after := w.record(1)
				if tc.code != codeNone {
					// A payload refusal of the holder's request changes
					// nothing but the op-log, which remembers it (OpError),
					// and a retry answers the same refusal.
					if evs != nil || !after.Cursor.Equal(before.Cursor) || after.OpLog.Len() != before.OpLog.Len()+1 {
						t.Fatalf("failed checkpoint changed state or emitted %v", evs)
					}
					if e, ok := (&after.OpLog).Find(2); !ok || e.Result != OpError || e.Refusal != tc.code {
						t.Fatalf("refusal logged as %+v (held %t)", e, ok)
					}
					_, _, err := w.c.Checkpoint(w.now, tenantA, l, tc.next, 2)
					wantCode(t, err, tc.code)
					return
				}
				if out != Executed || !after.Cursor.Equal(tc.next) || len(evs) != 1 || evs[0].Kind != EventShardCheckpointed {
					t.Fatalf("out=%v cursor=%+v events=%v", out, after.Cursor, evs)
				}
				if got := evs[0].LastKey.Bytes(); string(got) != string(tc.next.LastKey) {
					t.Fatalf("event key %q", got)
				}
			})
		}
	})
}

func TestCompleteAndPark(t *testing.T) {
	forBackends(t, func(t *testing.T, b backend) {
		t.Run("complete", func(t *testing.T) {
			w := newWorld(t, b.make(t, DefaultConfig()))
			l := w.acquire(1, w1)
			out, evs, err := w.c.Complete(w.now, tenantA, l, cur("l"), 1)
			wantCode(t, err, codeNone)
			r := w.record(1)
			if out != Executed || r.Status != ShardDone || r.Lease.Set || string(r.Cursor.LastKey) != "l" {
				t.Fatalf("after complete: %+v", r)
			}
			if len(evs) != 1 || evs[0].Kind != EventShardCompleted || !evs[0].Kind.IsTerminal() {
				t.Fatalf("events %v", evs)
			}
			_, _, err = w.c.Checkpoint(w.now, tenantA, l, cur("l"), 2)
			wantCode(t, err, CodeShardTerminal)
		})
		t.Run("complete without progress", func(t *testing.T) {
			w := newWorld(t, b.make(t, DefaultConfig()))
			l := w.acquire(1, w1)
			_, _, err := w.c.Complete(w.now, tenantA, l, Cursor{}, 1)
			wantCode(t, err, codeNone)
		})
		for _, tc := range []struct {
			name  string
			final Cursor
			code  Code
		}{
			{"reset", Cursor{}, CodeCursorReset},
			{"regression", cur("b"), CodeCursorRegression},
			{"out of bounds", cur("z"), CodeCursorOutOfBounds},
		} {
			t.Run("complete "+tc.name, func(t *testing.T) {
				w := newWorld(t, b.make(t, DefaultConfig()))
				l := w.acquire(1, w1)
				_, _, err := w.c.Checkpoint(w.now, tenantA, l, cur("c"), 1)
				wantCode(t, err, codeNone)
				_, _, err = w.c.Complete(w.now, tenantA, l, tc.final, 2)
				wantCode(t, err, tc.code)
				if w.record(1).Status != ShardActive {
					t.Fatal("refused complete changed the status")
				}
			})
		}
		t.Run("park", func(t *testing.T) {
			w := newWorld(t, b.make(t, DefaultConfig()))
			l := w.acquire(1, w1)
			_, _, err := w.c.ParkShard(w.now, tenantA, l, ParkReason(9), 1)
			wantCode(t, err, CodeInvalidArgument)
			out, evs, err := w.c.ParkShard(w.now, tenantA, l, ParkTooManyErrors, 2)
			wantCode(t, err, codeNone)
			r := w.record(1)
			if out != Executed || r.Status != ShardParked || r.Lease.Set || r.ParkReason != Some(ParkTooManyErrors) {
				t.Fatalf("after park: %+v", r)
			}
			if len(evs) != 1 || evs[0].Kind != EventShardParked || evs[0].Reason != ParkTooManyErrors {
				t.Fatalf("events %v", evs)
			}
			_, _, err = w.c.AcquireAndRestore(w.now, tenantA, ShardKey{run1, 1}, w1)
			wantCode(t, err, CodeShardTerminal)
		})
	})
}

func TestSplitReplace(t *testing.T) {
	forBackends(t, func(t *testing.T, b backend) {
		t.Run("children partition the parent", func(t *testing.T) {
			w := newWorld(t, b.make(t, DefaultConfig()))
			l := w.acquire(1, w1)
			plan := SplitReplacePlan{Children: []ShardSpec{spec("a", "d"), {Start: bs("d"), End: bs("h"), Metadata: bs("meta")}, spec("h", "m")}}
			res, evs, err := w.c.SplitReplace(w.now, tenantA, l, plan, 5)
			wantCode(t, err, codeNone)
			if res.Outcome != Executed || len(res.Children) != 3 {
				t.Fatalf("result %+v", res)
			}
			for i, id := range res.Children {
				if id != deriveShardID(run1, 1, 5, DerivedChild, uint32(i)) {
					t.Fatalf("child %d id %s not derived", i, id)
				}
				c := w.record(id)
				if c.Status != ShardActive || c.Fence != InitialFence || c.Lease.Set || c.Parent != Some(ShardID(1)) || !c.Spec.Equal(plan.Children[i]) || c.Cursor.HasKey() {
					t.Fatalf("child %d: %+v", i, c)
				}
			}
			p := w.record(1)
			if p.Status != ShardSplit || p.Lease.Set || !slices.Equal(p.Spawned, res.Children) {
				t.Fatalf("parent: %+v", p)
			}
			if len(evs) != 1 || evs[0].Kind != EventShardSplit || !slices.Equal(evs[0].Children, res.Children) {
				t.Fatalf("events %v", evs)
			}
			w.checkAll()
			// A child can be leased and worked.
			cl := w.acquire(res.Children[1], w2)
			_, _, err = w.c.Checkpoint(w.now, tenantA, cl, cur("e"), 6)
			wantCode(t, err, codeNone)
		})
		many := make([]ShardSpec, MaxSplitChildren+1)
		for i := range many {
			many[i] = spec(fmt.Sprintf("b%03d", i), fmt.Sprintf("b%03d", i+1))
		}
		many[0].Start, many[len(many)-1].End = bs("a"), bs("m")
		for _, tc := range []struct {
			name     string
			children []ShardSpec
			v        SplitViolation
		}{
			{"one child", []ShardSpec{spec("a", "m")}, SplitTooFewChildren},
			{"too many", many, SplitTooManyChildren},
			{"gap", []ShardSpec{spec("a", "c"), spec("d", "m")}, SplitGap},
			{"gap at start", []ShardSpec{spec("b", "c"), spec("c", "m")}, SplitGap},
			{"gap at end", []ShardSpec{spec("a", "c"), spec("c", "l")}, SplitGap},
			{"overlap", []ShardSpec{spec("a", "d"), spec("c", "m")}, SplitOverlap},
			{"unbounded middle", []ShardSpec{spec("a", ""), spec("c", "m")}, SplitOverlap},
			{"before start", []ShardSpec{spec("0", "c"), spec("c", "m")}, SplitOutOfRange},
			{"past end", []ShardSpec{spec("a", "c"), spec("c", "")}, SplitOutOfRange},
			{"empty child", []ShardSpec{spec("a", "c"), spec("c", "c"), spec("c", "m")}, SplitEmptyRange},
		} {
			t.Run(tc.name, func(t *testing.T) {
				w := newWorld(t, b.make(t, DefaultConfig()))
				l := w.acquire(1, w1)
				_, _, err := w.c.SplitReplace(w.now, tenantA, l, SplitReplacePlan{Children: tc.children}, 5)
				wantCode(t, err, CodeSplitInvalid)
				if se := err.(*SplitError); se.Split != tc.v {
					t.Fatalf("violation %v, want %v", se.Split, tc.v)
				}
				if r := w.record(1); r.Status != ShardActive || len(r.Spawned) != 0 {
					t.Fatal("refused split changed the parent")
				}
			})
		}
		t.Run("unbounded parent", func(t *testing.T) {
			w := newWorld(t, b.make(t, DefaultConfig()))
			l := w.acquire(2, w1)
			_, _, err := w.c.SplitReplace(w.now, tenantA, l, SplitReplacePlan{Children: []ShardSpec{spec("m", "p"), spec("p", "")}}, 5)
			wantCode(t, err, codeNone)
		})
	})
}

func TestSplitResidual(t *testing.T) {
	forBackends(t, func(t *testing.T, b backend) {
		t.Run("parent shrinks and keeps its lease", func(t *testing.T) {
			w := newWorld(t, b.make(t, DefaultConfig()))
			l := w.acquire(1, w1)
			_, _, err := w.c.Checkpoint(w.now, tenantA, l, cur("c"), 1)
			wantCode(t, err, codeNone)
			plan := SplitResidualPlan{Parent: spec("a", "g"), Residual: spec("g", "m")}
			res, evs, err := w.c.SplitResidual(w.now, tenantA, l, plan, 2)
			wantCode(t, err, codeNone)
			if res.Outcome != Executed || res.Residual != deriveShardID(run1, 1, 2, DerivedResidual, 0) {
				t.Fatalf("result %+v", res)
			}
			p := w.record(1)
			if p.Status != ShardActive || !p.Spec.SameRange(plan.Parent) || !p.Lease.Set || !slices.Equal(p.Spawned, []ShardID{res.Residual}) {
				t.Fatalf("parent %+v", p)
			}
			r := w.record(res.Residual)
			if !r.Spec.SameRange(plan.Residual) || r.Cursor.HasKey() || r.Parent != Some(ShardID(1)) || r.Fence != InitialFence {
				t.Fatalf("residual %+v", r)
			}
			if len(evs) != 1 || evs[0].Kind != EventShardResidualCreated || evs[0].Residual != res.Residual {
				t.Fatalf("events %v", evs)
			}
			// The parent works on within its shrunk range only.
			_, _, err = w.c.Checkpoint(w.now, tenantA, l, cur("f"), 3)
			wantCode(t, err, codeNone)
			_, _, err = w.c.Checkpoint(w.now, tenantA, l, cur("h"), 4)
			wantCode(t, err, CodeCursorOutOfBounds)
			w.checkAll()
		})
		for _, tc := range []struct {
			name string
			plan SplitResidualPlan
			v    SplitViolation
		}{
			{"cursor beyond the shrunk range", SplitResidualPlan{spec("a", "b"), spec("b", "m")}, SplitCursorOutside},
			{"cursor at the split point", SplitResidualPlan{spec("a", "c"), spec("c", "m")}, SplitCursorOutside},
			{"start moved", SplitResidualPlan{spec("g", "m"), spec("a", "g")}, SplitStartMoved},
			{"gap", SplitResidualPlan{spec("a", "f"), spec("g", "m")}, SplitGap},
			{"short residual", SplitResidualPlan{spec("a", "f"), spec("f", "k")}, SplitGap},
			{"overlap", SplitResidualPlan{spec("a", "h"), spec("g", "m")}, SplitOverlap},
			{"residual past end", SplitResidualPlan{spec("a", "f"), spec("f", "")}, SplitOutOfRange},
			{"empty residual", SplitResidualPlan{spec("a", "m"), spec("m", "m")}, SplitEmptyRange},
			{"parent keeps everything", SplitResidualPlan{spec("a", "m"), spec("m", "n")}, SplitOutOfRange},
		} {
			t.Run(tc.name, func(t *testing.T) {
				w := newWorld(t, b.make(t, DefaultConfig()))
				l := w.acquire(1, w1)
				_, _, err := w.c.Checkpoint(w.now, tenantA, l, cur("c"), 1)
				wantCode(t, err, codeNone)
				_, _, err = w.c.SplitResidual(w.now, tenantA, l, tc.plan, 2)
				wantCode(t, err, CodeSplitInvalid)
				if se := err.(*SplitError); se.Split != tc.v {
					t.Fatalf("violation %v, want %v", se.Split, tc.v)
				}
			})
		}
	})
}

func TestSpawnCap(t *testing.T) {
	rec := ShardRecord{Tenant: tenantA, Run: run1, Shard: 1, Spec: spec("a", "m"), Fence: 2,
		Lease: Some(LeaseHolder{Owner: w1, Deadline: 50})}
	for i := 0; i < maxSpawnedPerShard-1; i++ {
		rec.Spawned = append(rec.Spawned, derivedBit|ShardID(1000+i))
	}
	l := Lease{Tenant: tenantA, Run: run1, Shard: 1, Owner: w1, Fence: 2, Deadline: 50}
	env := StepEnv{Now: 10, Tenant: tenantA}
	none := func(ShardID) (*ShardRecord, bool) { return nil, false }
	// One residual still fits; two children do not.
	ch, err := StepSplitResidual(env, &rec, l, SplitResidualPlan{spec("a", "g"), spec("g", "m")}, 1, none)
	wantCode(t, err, codeNone)
	if len(ch.Next.Spawned) != maxSpawnedPerShard || ch.Next.AssertInvariants() != nil {
		t.Fatalf("spawned %d", len(ch.Next.Spawned))
	}
	_, err = StepSplitReplace(env, &rec, l, SplitReplacePlan{[]ShardSpec{spec("a", "g"), spec("g", "m")}}, 2)
	wantCode(t, err, CodeSpawnCapExceeded)
	full := ch.Next
	_, err = StepSplitResidual(env, &full, l, SplitResidualPlan{spec("a", "c"), spec("c", "g")}, 3, none)
	wantCode(t, err, CodeSpawnCapExceeded)
}

func TestSplitResidualChain(t *testing.T) {
	// Many residual splits: ids stay distinct and every record stays valid.
	w, _ := refWorld(t, DefaultConfig(), InitialShard{Shard: 1, Spec: spec("k0000", "k1000")})
	l := w.acquire(1, w1)
	seen := map[ShardID]bool{1: true}
	for i := 0; i < 100; i++ {
		split := fmt.Sprintf("k%04d", 999-i)
		prev := fmt.Sprintf("k%04d", 1000-i)
		if i == 0 {
			prev = "k1000"
		}
		res, _, err := w.c.SplitResidual(w.now, tenantA, l, SplitResidualPlan{spec("k0000", split), spec(split, prev)}, OpID(100+i))
		wantCode(t, err, codeNone)
		if seen[res.Residual] {
			t.Fatalf("duplicate residual id %s", res.Residual)
		}
		seen[res.Residual] = true
	}
	w.checkAll()
	if p := w.record(1); len(p.Spawned) != 100 || string(p.Spec.End) != "k0900" {
		t.Fatalf("parent spawned %d end %q", len(p.Spawned), p.Spec.End)
	}
}
