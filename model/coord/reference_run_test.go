package coord

import (
	"reflect"
	"slices"
	"testing"
)

func TestCreateAndRegister(t *testing.T) {
	forBackends(t, func(t *testing.T, b backend) {
		c := b.make(t, DefaultConfig())
		evs, err := c.CreateRun(1, tenantA, run1, RunConfig{Semantics: SemanticsDispatched})
		wantCode(t, err, codeNone)
		if len(evs) != 1 || evs[0].Kind != EventRunCreated {
			t.Fatalf("events %v", evs)
		}
		rec, err := c.GetRun(tenantA, run1)
		wantCode(t, err, codeNone)
		if rec.Status != RunInitializing || rec.Config.LeaseDuration != DefaultConfig().DefaultLeaseDuration || rec.CreatedAt != 1 {
			t.Fatalf("run %+v", rec)
		}
		_, err = c.CreateRun(2, tenantA, run1, RunConfig{})
		wantCode(t, err, CodeRunExists)
		_, err = c.CreateRun(2, tenantA, 2, RunConfig{Semantics: 7})
		wantCode(t, err, CodeInvalidArgument)
		// Same run id in another tenant is a different run.
		_, err = c.CreateRun(2, tenantB, run1, RunConfig{})
		wantCode(t, err, codeNone)
		_, err = c.GetRun(tenantA, 99)
		wantCode(t, err, CodeRunNotFound)

		for _, tc := range []struct {
			name   string
			shards []InitialShard
			v      ManifestViolation
		}{
			{"empty", nil, ManifestEmpty},
			{"derived id", []InitialShard{{derivedBit | 1, spec("a", "b")}}, ManifestDerivedID},
			{"duplicate", []InitialShard{{1, spec("a", "b")}, {1, spec("b", "c")}}, ManifestDuplicateID},
			{"empty range", []InitialShard{{1, spec("b", "b")}}, ManifestEmptyRange},
			{"reversed range", []InitialShard{{1, spec("c", "b")}}, ManifestEmptyRange},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, _, err := c.RegisterShards(3, tenantA, run1, tc.shards, 1)
				wantCode(t, err, CodeManifestInvalid)
				if re := err.(*RunError); re.Manifest != tc.v {
					t.Fatalf("violation %v want %v", re.Manifest, tc.v)
				}
			})
		}
		_, _, err = c.RegisterShards(3, tenantA, 99, []InitialShard{{1, spec("", "")}}, 1)
		wantCode(t, err, CodeRunNotFound)

		roots := []InitialShard{{3, spec("m", "")}, {1, spec("", "m")}}
		out, evs, err := c.RegisterShards(4, tenantA, run1, roots, 2)
		wantCode(t, err, codeNone)
		if out != Executed || len(evs) != 1 || evs[0].Kind != EventRunActivated || evs[0].ShardCount != 2 {
			t.Fatalf("register: %v %v", out, evs)
		}
		rec, _ = c.GetRun(tenantA, run1)
		if rec.Status != RunActive || !slices.Equal(rec.RootShards, []ShardID{3, 1}) {
			t.Fatalf("run %+v", rec)
		}
		shards, _ := c.ListShards(4, tenantA, run1, FilterAll())
		if len(shards) != 2 || shards[0].Shard != 1 || shards[1].Shard != 3 {
			t.Fatalf("shards %+v", shards)
		}
		recs, _ := c.Shards()
		for _, r := range recs {
			if r.Semantics != SemanticsDispatched || r.Fence != InitialFence {
				t.Fatalf("shard %+v", r)
			}
		}
		// Replay, conflict, and a second registration.
		out, evs, err = c.RegisterShards(5, tenantA, run1, roots, 2)
		if err != nil || out != Replayed || evs != nil {
			t.Fatalf("replay: %v %v %v", out, evs, err)
		}
		_, _, err = c.RegisterShards(5, tenantA, run1, roots[:1], 2)
		wantCode(t, err, CodeOpIDConflict)
		_, _, err = c.RegisterShards(5, tenantA, run1, roots, 3)
		wantCode(t, err, CodeRunState)
		checkAllRecords(t, c)
	})
}

func TestCreateRunWithShards(t *testing.T) {
	forBackends(t, func(t *testing.T, b backend) {
		c := b.make(t, DefaultConfig())
		roots := []InitialShard{{1, spec("", "")}}
		out, evs, err := createRunWithShards(c, 1, tenantA, run1, RunConfig{}, roots, 7)
		if err != nil || out != Executed || len(evs) != 2 {
			t.Fatalf("first: %v %v %v", out, evs, err)
		}
		out, _, err = createRunWithShards(c, 2, tenantA, run1, RunConfig{}, roots, 7)
		if err != nil || out != Replayed {
			t.Fatalf("retry: %v %v", out, err)
		}
		_, _, err = createRunWithShards(c, 2, tenantA, run1, RunConfig{LeaseDuration: 99}, roots, 7)
		wantCode(t, err, CodeRunExists)
	})
}

func TestRunTransitions(t *testing.T) {
	type step struct {
		kind OpKind
		op   OpID
		code Code
		out  Outcome
	}
	call := func(c Coordinator, s step) (Outcome, []Event, error) {
		switch s.kind {
		case OpKindCompleteRun:
			return c.CompleteRun(200, tenantA, run1, s.op)
		case OpKindFailRun:
			return c.FailRun(200, tenantA, run1, s.op)
		}
		return c.CancelRun(200, tenantA, run1, s.op)
	}
	for _, tc := range []struct {
		name     string
		register bool
		steps    []step
		final    RunStatus
	}{
		{"complete", true, []step{{OpKindCompleteRun, 1, codeNone, Executed}, {OpKindCompleteRun, 1, codeNone, Replayed}, {OpKindFailRun, 2, CodeRunState, 0}, {OpKindCompleteRun, 3, CodeRunState, 0}}, RunDone},
		{"fail", true, []step{{OpKindFailRun, 1, codeNone, Executed}, {OpKindCompleteRun, 2, CodeRunState, 0}, {OpKindCancelRun, 3, CodeRunState, 0}}, RunFailed},
		{"cancel active", true, []step{{OpKindCancelRun, 1, codeNone, Executed}, {OpKindCancelRun, 1, codeNone, Replayed}}, RunCancelled},
		{"cancel initializing", false, []step{{OpKindCancelRun, 1, codeNone, Executed}}, RunCancelled},
		{"complete initializing", false, []step{{OpKindCompleteRun, 1, CodeRunState, 0}, {OpKindFailRun, 2, CodeRunState, 0}}, RunInitializing},
		{"op id reused across kinds", true, []step{{OpKindFailRun, 1, codeNone, Executed}, {OpKindCompleteRun, 1, CodeOpIDConflict, 0}}, RunFailed},
	} {
		forBackends(t, func(t *testing.T, b backend) {
			t.Run(tc.name, func(t *testing.T) {
				c := b.make(t, DefaultConfig())
				if tc.register {
					newWorld(t, c)
				} else if _, err := c.CreateRun(100, tenantA, run1, RunConfig{}); err != nil {
					t.Fatal(err)
				}
				for i, s := range tc.steps {
					out, evs, err := call(c, s)
					wantCode(t, err, s.code)
					if err == nil && out != s.out {
						t.Fatalf("step %d: outcome %v", i, out)
					}
					if err == nil && out == Executed && (len(evs) != 1 || !evs[0].Kind.IsRunEvent() || !evs[0].Kind.IsTerminal()) {
						t.Fatalf("step %d: events %v", i, evs)
					}
				}
				rec, _ := c.GetRun(tenantA, run1)
				if rec.Status != tc.final || rec.CompletedAt.Set != tc.final.Terminal() {
					t.Fatalf("final %+v", rec)
				}
				_, _, err := c.CompleteRun(1, tenantA, 42, 1)
				wantCode(t, err, CodeRunNotFound)
			})
		})
	}
}

func TestProgressAndList(t *testing.T) {
	forBackends(t, func(t *testing.T, b backend) {
		w := newWorld(t, b.make(t, DefaultConfig()), InitialShard{1, spec("a", "c")}, InitialShard{2, spec("c", "e")}, InitialShard{3, spec("e", "g")}, InitialShard{4, spec("g", "")})
		l1 := w.acquire(1, w1)
		l2 := w.acquire(2, w1)
		l3 := w.acquire(3, w1)
		w.acquire(4, w2)
		mustOK := func(_ any, _ []Event, err error) { t.Helper(); wantCode(t, err, codeNone) }
		mustOK(w.c.Complete(w.now, tenantA, l1, cur("b"), 1))
		mustOK(w.c.ParkShard(w.now, tenantA, l2, ParkNotFound, 2))
		res, _, err := w.c.SplitReplace(w.now, tenantA, l3, SplitReplacePlan{[]ShardSpec{spec("e", "f"), spec("f", "g")}}, 3)
		wantCode(t, err, codeNone)

		p, err := w.c.GetRunProgress(w.now, tenantA, run1)
		wantCode(t, err, codeNone)
		want := RunProgress{Status: RunActive, Total: 6, Active: 3, Leased: 1, Done: 1, Split: 1, Parked: 1, Terminal: StillActive, RootCount: 4}
		p.Watermark = Watermark{} // TestProgressWatermark judges it
		if !reflect.DeepEqual(p, want) {
			t.Fatalf("progress %+v\nwant %+v", p, want)
		}
		ids := func(f ShardFilter, now LogicalTime) []ShardID {
			s, err := w.c.ListShards(now, tenantA, run1, f)
			wantCode(t, err, codeNone)
			var out []ShardID
			for _, x := range s {
				out = append(out, x.Shard)
			}
			return out
		}
		children := slices.Sorted(slices.Values(res.Children))
		for _, tc := range []struct {
			name string
			f    ShardFilter
			now  LogicalTime
			want []ShardID
		}{
			{"all", FilterAll(), w.now, append([]ShardID{1, 2, 3, 4}, children...)},
			{"root only", ShardFilter{Select: SelectAll, RootOnly: true}, w.now, []ShardID{1, 2, 3, 4}},
			{"active", FilterActive(), w.now, append([]ShardID{4}, children...)},
			{"active roots", ShardFilter{Select: SelectActive, RootOnly: true}, w.now, []ShardID{4}},
			{"available", FilterAvailable(), w.now, children},
			{"available after expiry", FilterAvailable(), w.now + 10, append([]ShardID{4}, children...)},
			{"parked", FilterParked(), w.now, []ShardID{2}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if got := ids(tc.f, tc.now); !slices.Equal(got, tc.want) {
					t.Fatalf("got %v want %v", got, tc.want)
				}
			})
		}
		s, _ := w.c.ListShards(w.now, tenantA, run1, FilterParked())
		if s[0].ParkReason != Some(ParkNotFound) || s[0].LeaseDeadline.Set {
			t.Fatalf("summary %+v", s[0])
		}
		_, err = w.c.ListShards(w.now, tenantB, run1, FilterAll())
		wantCode(t, err, CodeRunNotFound)
		_, err = w.c.GetRunProgress(w.now, tenantB, run1)
		wantCode(t, err, CodeRunNotFound)
	})
}

func TestEvaluateRunTerminal(t *testing.T) {
	for _, tc := range []struct {
		p    RunProgress
		want RunTerminalEvaluation
	}{
		{RunProgress{Active: 1, Parked: 1}, StillActive},
		{RunProgress{Done: 2, Parked: 1}, HasFailures},
		{RunProgress{Done: 2, Split: 1}, AllDone},
		{RunProgress{}, AllDone},
	} {
		if got := evaluateRunTerminal(tc.p); got != tc.want {
			t.Errorf("%+v: %v want %v", tc.p, got, tc.want)
		}
	}
}

func TestUnpark(t *testing.T) {
	forBackends(t, func(t *testing.T, b backend) {
		w := newWorld(t, b.make(t, DefaultConfig()))
		key := ShardKey{run1, 1}
		_, _, err := w.c.UnparkShard(w.now, tenantA, key, 1)
		wantCode(t, err, CodeShardNotParked)
		l := w.acquire(1, w1)
		_, _, err = w.c.ParkShard(w.now, tenantA, l, ParkPoisoned, 2)
		wantCode(t, err, codeNone)
		parked := w.record(1)
		out, evs, err := w.c.UnparkShard(w.now, tenantA, key, 3)
		wantCode(t, err, codeNone)
		r := w.record(1)
		if out != Executed || r.Status != ShardActive || r.ParkReason.Set || r.Lease.Set || r.Fence != parked.Fence+1 {
			t.Fatalf("after unpark %+v", r)
		}
		if len(evs) != 1 || evs[0].Kind != EventShardUnparked || evs[0].Fence != r.Fence {
			t.Fatalf("events %v", evs)
		}
		// The pre-park lease is fenced out; a new acquire works.
		_, _, err = w.c.Checkpoint(w.now, tenantA, l, cur("b"), 4)
		wantCode(t, err, CodeStaleFence)
		w.acquire(1, w2)
		out, _, err = w.c.UnparkShard(w.now, tenantA, key, 3)
		if err != nil || out != Replayed {
			t.Fatalf("replay %v %v", out, err)
		}
		_, _, err = w.c.UnparkShard(w.now, tenantA, ShardKey{run1, 9}, 5)
		wantCode(t, err, CodeShardNotFound)
		_, _, err = w.c.UnparkShard(w.now, tenantB, key, 5)
		wantCode(t, err, CodeShardNotFound)
		// Done is not Parked.
		l2 := w.acquire(2, w1)
		_, _, err = w.c.Complete(w.now, tenantA, l2, Cursor{}, 6)
		wantCode(t, err, codeNone)
		_, _, err = w.c.UnparkShard(w.now, tenantA, ShardKey{run1, 2}, 7)
		wantCode(t, err, CodeShardNotParked)
	})
}

// TestUnparkEndedRun: a shard of a run that ended stays parked. The run
// no longer hands out its shards, so an unparked one could never finish;
// unpark is refused with CodeRunState naming the run's status, for every
// terminal status, while a replay of an unpark from before the end still
// replays.
func TestUnparkEndedRun(t *testing.T) {
	for _, end := range []OpKind{OpKindFailRun, OpKindCompleteRun, OpKindCancelRun} {
		forBackends(t, func(t *testing.T, b backend) {
			t.Run(end.String(), func(t *testing.T) {
				w := newWorld(t, b.make(t, DefaultConfig()))
				park := func(shard ShardID, op OpID) {
					t.Helper()
					l := w.acquire(shard, w1)
					if _, _, err := w.c.ParkShard(w.now, tenantA, l, ParkTooManyErrors, op); err != nil {
						t.Fatal(err)
					}
				}
				park(1, 1)
				if out, _, err := w.c.UnparkShard(w.now, tenantA, ShardKey{run1, 1}, 2); err != nil || out != Executed {
					t.Fatalf("unpark in the Active run: %v %v", out, err)
				}
				park(1, 3)
				park(2, 4)
				var err error
				switch end {
				case OpKindFailRun:
					_, _, err = w.c.FailRun(w.now, tenantA, run1, 5)
				case OpKindCompleteRun:
					_, _, err = w.c.CompleteRun(w.now, tenantA, run1, 5)
				default:
					_, _, err = w.c.CancelRun(w.now, tenantA, run1, 5)
				}
				wantCode(t, err, codeNone)
				run, _ := w.c.GetRun(tenantA, run1)

				_, evs, err := w.c.UnparkShard(w.now, tenantA, ShardKey{run1, 2}, 6)
				wantCode(t, err, CodeRunState)
				if ue := err.(*UnparkError); ue.RunStatus != run.Status || ue.Shard != (ShardKey{run1, 2}) || evs != nil {
					t.Fatalf("error %+v, events %v", ue, evs)
				}
				if r := w.record(2); r.Status != ShardParked || r.Fence != 2 {
					t.Fatalf("shard after a refused unpark: %+v", r)
				}
				// The unpark of before the end is still a replay.
				if out, _, err := w.c.UnparkShard(w.now, tenantA, ShardKey{run1, 1}, 2); err != nil || out != Replayed {
					t.Fatalf("replay after the run ended: %v %v", out, err)
				}
				w.checkAll()
			})
		})
	}
}

func TestClaim(t *testing.T) {
	forBackends(t, func(t *testing.T, b backend) {
		cfg := DefaultConfig()
		cfg.ClaimCooldown = 5
		c := b.make(t, cfg)
		_, _, err := c.ClaimNextAvailable(1, tenantA, w1)
		wantCode(t, err, CodeNoShardAvailable)
		// Run 2 is initializing: never claimed from.
		_, err = c.CreateRun(1, tenantA, 0, RunConfig{})
		wantCode(t, err, codeNone)
		w := newWorld(t, c, InitialShard{5, spec("a", "b")}, InitialShard{3, spec("b", "c")})

		res, evs, err := c.ClaimNextAvailable(w.now, tenantA, w1)
		wantCode(t, err, codeNone)
		if res.Lease.Shard != 3 || res.Lease.Owner != w1 || len(evs) != 1 || evs[0].Kind != EventShardAcquired {
			t.Fatalf("claim %+v %v", res, evs)
		}
		_, _, err = c.ClaimNextAvailable(w.now+4, tenantA, w1)
		wantCode(t, err, CodeClaimCooldown)
		if ce := err.(*ClaimError); ce.At != w.now+5 {
			t.Fatalf("retry at %d", ce.At)
		}
		// Cooldown is per worker.
		res, _, err = c.ClaimNextAvailable(w.now+4, tenantA, w2)
		wantCode(t, err, codeNone)
		if res.Lease.Shard != 5 {
			t.Fatalf("w2 claimed %s", res.Lease.Shard)
		}
		_, _, err = c.ClaimNextAvailable(w.now+5, tenantA, w1)
		wantCode(t, err, CodeNoShardAvailable)
		// After expiry the shard is available again.
		res, _, err = c.ClaimNextAvailable(w.now+10, tenantA, w1)
		wantCode(t, err, codeNone)
		if res.Lease.Shard != 3 || res.Lease.Fence != 3 {
			t.Fatalf("reclaim %+v", res.Lease)
		}
		_, _, err = c.ClaimNextAvailable(w.now+20, tenantB, w1)
		wantCode(t, err, CodeNoShardAvailable)
		// Claims stop once the run is cancelled.
		_, _, err = c.CancelRun(w.now+30, tenantA, run1, 77)
		wantCode(t, err, codeNone)
		_, _, err = c.ClaimNextAvailable(w.now+40, tenantA, w2)
		wantCode(t, err, CodeNoShardAvailable)
	})
}

func TestShardLimits(t *testing.T) {
	forBackends(t, func(t *testing.T, b backend) {
		cfg := DefaultConfig()
		cfg.Limits = ShardLimits{MaxPerTenant: 3, MaxTotal: 3}
		c := b.make(t, cfg)
		for _, tn := range []TenantID{tenantA, tenantB} {
			_, err := c.CreateRun(1, tn, run1, RunConfig{})
			wantCode(t, err, codeNone)
		}
		_, _, err := c.RegisterShards(1, tenantA, run1, []InitialShard{{1, spec("a", "b")}, {2, spec("b", "c")}, {3, spec("c", "d")}, {4, spec("d", "e")}}, 1)
		wantCode(t, err, CodeShardLimit)
		if re := err.(*RunError); re.Limit.Scope != LimitTenant || re.Limit.Max != 3 {
			t.Fatalf("limit %+v", re.Limit)
		}
		if rec, _ := c.GetRun(tenantA, run1); rec.Status != RunInitializing {
			t.Fatal("refused registration changed the run")
		}
		_, _, err = c.RegisterShards(1, tenantA, run1, []InitialShard{{1, spec("a", "m")}, {2, spec("m", "")}}, 2)
		wantCode(t, err, codeNone)
		_, _, err = c.RegisterShards(1, tenantB, run1, []InitialShard{{1, spec("a", "b")}, {2, spec("b", "c")}, {3, spec("c", "d")}}, 1)
		wantCode(t, err, CodeShardLimit)
		if re := err.(*RunError); re.Limit.Scope != LimitGlobal {
			t.Fatalf("limit %+v", re.Limit)
		}
		_, _, err = c.RegisterShards(1, tenantB, run1, []InitialShard{{1, spec("a", "b")}}, 1)
		wantCode(t, err, codeNone)
		// Tenant A holds 2 of 3: a two-child split would need 4.
		res, _, err := c.AcquireAndRestore(1, tenantA, ShardKey{run1, 1}, w1)
		wantCode(t, err, codeNone)
		_, _, err = c.SplitReplace(1, tenantA, res.Lease, SplitReplacePlan{[]ShardSpec{spec("a", "c"), spec("c", "m")}}, 3)
		wantCode(t, err, CodeShardLimit)
		// The global ceiling (3, with B's 1) blocks even one residual.
		_, _, err = c.SplitResidual(1, tenantA, res.Lease, SplitResidualPlan{spec("a", "c"), spec("c", "m")}, 4)
		wantCode(t, err, CodeShardLimit)
		if r, _ := c.Shards(); len(r) != 3 {
			t.Fatalf("%d shards after refused splits", len(r))
		}
	})
}
