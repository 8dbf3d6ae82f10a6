package coord

import (
	"errors"
	"slices"
	"testing"

	"shardsim/model/bugs"
	"shardsim/property"
	"shardsim/simkv"
)

// script is a scripted history through the differential oracle. It starts
// at time 100 with tenant A's run 1 of roots 1 [a, m) and 2 [m, ∞) and
// tenant B's run 1 of root 1 [a, m), all with 5-unit leases. The first
// failing step stops it and err says why.
type script struct {
	p   *pair
	err error
}

func newScript(t *testing.T, cfg Config, opts pairOptions) *script {
	t.Helper()
	p, err := newPair(cfg, testEtcdConfig(cfg), opts, newOracleStats())
	if err != nil {
		t.Fatal(err)
	}
	s := &script{p: p}
	p.advance(100)
	s.do(callCreateRun(tenantA, run1, RunConfig{LeaseDuration: 5}))
	s.do(callRegister(tenantA, run1, []InitialShard{{1, spec("a", "m")}, {2, spec("m", "")}}, 1))
	s.do(callCreateRun(tenantB, run1, RunConfig{LeaseDuration: 5}))
	s.do(callRegister(tenantB, run1, []InitialShard{{1, spec("a", "m")}}, 1))
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s
}

func (s *script) do(c call) result {
	if s.err != nil {
		return result{}
	}
	r, err := s.p.step(c)
	s.err = err
	return r
}

// acquire returns the granted lease (zero if the acquire failed).
func (s *script) acquire(tn TenantID, shard ShardID, w WorkerID) Lease {
	if r := s.do(callAcquire(tn, ShardKey{run1, shard}, w)); r.code == codeNone && r.Value != nil {
		return r.Value.(AcquireResult).Lease
	}
	return Lease{}
}

// bugTable gives every coord bug a focused scenario. Each returns the
// first failure the oracle or a property checker reports: nil with no bug
// on, a *Violation of one of the bug's properties with the bug on.
var bugTable = map[string]func(t *testing.T, cfg Config) error{
	bugs.CoordNoFenceBumpOnAcquire: func(t *testing.T, cfg Config) error {
		// w1's lease lapses and w2 takes the shard over: the takeover
		// must raise the fence, or w1 can no longer be told from w2.
		s := newScript(t, cfg, pairOptions{})
		s.acquire(tenantA, 1, w1)
		s.p.advance(10)
		s.acquire(tenantA, 1, w2)
		return s.err
	},
	bugs.CoordNoFenceCheck: func(t *testing.T, cfg Config) error {
		// w1 pauses past its lease, restarts (same id) and re-acquires;
		// the paused incarnation then checkpoints with its old lease.
		s := newScript(t, cfg, pairOptions{})
		zombie := s.acquire(tenantA, 1, w1)
		s.p.advance(10)
		s.acquire(tenantA, 1, w1)
		s.do(callCheckpoint(tenantA, zombie, cur("c"), 10))
		return s.err
	},
	bugs.CoordAcquireLiveLease: func(t *testing.T, cfg Config) error {
		s := newScript(t, cfg, pairOptions{})
		s.acquire(tenantA, 1, w1)
		s.p.advance(1)
		s.acquire(tenantA, 1, w2)
		return s.err
	},
	bugs.CoordAcquireTerminal: func(t *testing.T, cfg Config) error {
		s := newScript(t, cfg, pairOptions{})
		l := s.acquire(tenantA, 1, w1)
		s.do(callComplete(tenantA, l, cur("c"), 10))
		s.acquire(tenantA, 1, w2)
		return s.err
	},
	bugs.CoordCompleteKeepsLease: func(t *testing.T, cfg Config) error {
		s := newScript(t, cfg, pairOptions{})
		l := s.acquire(tenantA, 1, w1)
		s.do(callComplete(tenantA, l, cur("c"), 10))
		return s.err
	},
	bugs.CoordSplitTwoTxns: func(t *testing.T, cfg Config) error {
		// The worker's connection dies right after the split's first
		// write transaction lands.
		h := &hookKV{}
		s := newScript(t, cfg, pairOptions{wrap: func(kv simkv.KV) simkv.KV { h.inner = kv; return h }})
		l := s.acquire(tenantA, 1, w1)
		h.downAfter = h.writes + 1
		s.do(callSplitReplace(tenantA, l, SplitReplacePlan{[]ShardSpec{spec("a", "f"), spec("f", "m")}}, 10))
		return s.err
	},
	bugs.CoordSplitGap: func(t *testing.T, cfg Config) error {
		s := newScript(t, cfg, pairOptions{})
		l := s.acquire(tenantA, 1, w1)
		s.do(callSplitReplace(tenantA, l, SplitReplacePlan{[]ShardSpec{spec("a", "c"), spec("d", "m")}}, 10))
		return s.err
	},
	bugs.CoordUnparkDone: func(t *testing.T, cfg Config) error {
		s := newScript(t, cfg, pairOptions{})
		l := s.acquire(tenantA, 1, w1)
		s.do(callComplete(tenantA, l, Cursor{}, 10))
		s.do(callUnpark(tenantA, ShardKey{run1, 1}, 11))
		return s.err
	},
	bugs.CoordCursorRegression: func(t *testing.T, cfg Config) error {
		s := newScript(t, cfg, pairOptions{})
		l := s.acquire(tenantA, 1, w1)
		s.do(callCheckpoint(tenantA, l, cur("f"), 10))
		s.do(callCheckpoint(tenantA, l, cur("c"), 11))
		return s.err
	},
	bugs.CoordCursorOutOfBounds: func(t *testing.T, cfg Config) error {
		s := newScript(t, cfg, pairOptions{})
		l := s.acquire(tenantA, 1, w1)
		s.do(callCheckpoint(tenantA, l, cur("x"), 10)) // the range is [a, m)
		return s.err
	},
	bugs.CoordOpIDConflictIgnored: func(t *testing.T, cfg Config) error {
		s := newScript(t, cfg, pairOptions{})
		l := s.acquire(tenantA, 1, w1)
		s.do(callCheckpoint(tenantA, l, cur("c"), 10))
		s.do(callCheckpoint(tenantA, l, cur("d"), 10))
		return s.err
	},
	bugs.CoordNoTenantCheck: func(t *testing.T, cfg Config) error {
		// A request scoped to tenant A presents tenant B's lease.
		s := newScript(t, cfg, pairOptions{})
		l := s.acquire(tenantB, 1, w1)
		s.do(callCheckpoint(tenantA, l, cur("c"), 10))
		return s.err
	},
	bugs.CoordEtcdBlindWrite: blindWriteRace,
	bugs.CoordLeaseBeforeReplay: func(t *testing.T, cfg Config) error {
		// w1's checkpoint lands; its lease lapses and w2 takes over; w1
		// retries the checkpoint: it must replay.
		s := newScript(t, cfg, pairOptions{})
		l := s.acquire(tenantA, 1, w1)
		s.do(callCheckpoint(tenantA, l, cur("c"), 10))
		s.p.advance(10)
		s.acquire(tenantA, 1, w2)
		if r := s.do(callCheckpoint(tenantA, l, cur("c"), 10)); s.err == nil && !r.replay {
			return property.Violated(property.CIdempotency, "the retry of a landed checkpoint after a takeover was refused: %s", r.Err)
		}
		return s.err
	},
	bugs.CoordRenewMisreports: func(t *testing.T, cfg Config) error {
		s := newScript(t, cfg, pairOptions{})
		l := s.acquire(tenantA, 1, w1)
		s.p.advance(2)
		if r := s.do(callRenew(tenantA, l)); s.err == nil && r.code == codeNone {
			rec := s.p.ref.Snapshot(s.p.now).Shards[0]
			if got := r.Value.(RenewResult).Deadline; got != rec.Lease.Val.Deadline {
				return property.Violated(property.CLinearizable, "renew answered deadline %d, stored %d", got, rec.Lease.Val.Deadline)
			}
		}
		return s.err
	},
	bugs.CoordParkDropsReason: func(t *testing.T, cfg Config) error {
		s := newScript(t, cfg, pairOptions{})
		l := s.acquire(tenantA, 1, w1)
		s.do(callPark(tenantA, l, ParkNotFound, 10))
		return s.err
	},
	bugs.CoordClaimIgnoresCooldown: func(t *testing.T, cfg Config) error {
		cfg.ClaimCooldown = 5
		s := newScript(t, cfg, pairOptions{})
		first := s.do(callClaim(tenantA, w1))
		s.p.advance(1)
		second := s.do(callClaim(tenantA, w1))
		if s.err == nil && first.code == codeNone && second.code == codeNone {
			return property.Violated(property.CCooldown, "two claims of one worker 1 unit apart with a cooldown of 5")
		}
		return s.err
	},
	bugs.CoordClaimSkipsExpired: func(t *testing.T, cfg Config) error {
		// w1's lease lapses; w2 claims: the only shard left is that one.
		s := newScript(t, cfg, pairOptions{})
		s.acquire(tenantA, 1, w1)
		l2 := s.acquire(tenantA, 2, w2)
		s.do(callComplete(tenantA, l2, Cursor{}, 11))
		s.p.advance(10)
		if r := s.do(callClaim(tenantA, w2)); s.err == nil && r.code != codeNone {
			return property.Violated(property.CEventuallyLeased, "a shard whose lease expired was not claimable: %s", r.Err)
		}
		return s.err
	},
	bugs.CoordErrorNamesTenant: func(t *testing.T, cfg Config) error {
		// A request of tenant A presents tenant B's lease: refused, and
		// the refusal must not name B.
		s := newScript(t, cfg, pairOptions{})
		l := s.acquire(tenantB, 1, w1)
		s.do(callCheckpoint(tenantA, l, cur("c"), 10))
		return s.err
	},
	bugs.CoordAcquireOwnLiveLease: func(t *testing.T, cfg Config) error {
		// A worker's second task re-acquires the shard its first task holds.
		s := newScript(t, cfg, pairOptions{})
		s.acquire(tenantA, 1, w1)
		s.p.advance(1)
		s.acquire(tenantA, 1, w1)
		return s.err
	},
	bugs.CoordEndedRunAccepts: func(t *testing.T, cfg Config) error {
		// The admin fails the run while w1 holds a shard; w1 checkpoints.
		s := newScript(t, cfg, pairOptions{})
		l := s.acquire(tenantA, 1, w1)
		s.do(callRunTransition(tenantA, run1, OpKindFailRun, 10))
		s.do(callCheckpoint(tenantA, l, cur("c"), 11))
		return s.err
	},
	bugs.CoordUnparkBumpsFirst: func(t *testing.T, cfg Config) error {
		// An admin unparks, from a stale memory, a shard that is Done.
		s := newScript(t, cfg, pairOptions{})
		l := s.acquire(tenantA, 1, w1)
		s.do(callComplete(tenantA, l, cur("c"), 10))
		s.do(callUnpark(tenantA, ShardKey{run1, 1}, 11))
		return s.err
	},
	bugs.CoordRunReopen: func(t *testing.T, cfg Config) error {
		s := newScript(t, cfg, pairOptions{})
		s.do(callRunTransition(tenantA, run1, OpKindFailRun, 10))
		s.do(callRunTransition(tenantA, run1, OpKindCompleteRun, 11))
		return s.err
	},
}

// blindWriteRace runs two etcd coordinators' acquires of one shard
// interleaved: coordinator A reads the shard, then, before A's transaction
// goes out, coordinator B runs its whole acquire. A's compare on the
// record's mod revision must then fail, and A's retry must find B's live
// lease. The durable states before, between and after are checked.
func blindWriteRace(t *testing.T, cfg Config) error {
	direct := simkv.NewDirect(simkv.NewStore(simkv.StoreConfig{}), 0)
	ecfg := testEtcdConfig(cfg)
	look, b := NewEtcd(direct, instance(ecfg, 1)), NewEtcd(direct, instance(ecfg, 2))
	h := &hookKV{inner: direct}
	a := NewEtcd(h, instance(ecfg, 3))
	const now = 100
	if _, _, err := createRunWithShards(look, now, tenantA, run1, RunConfig{LeaseDuration: 5}, []InitialShard{{1, spec("a", "m")}}, 1); err != nil {
		t.Fatal(err)
	}
	key := ShardKey{run1, 1}
	before, err := look.Snapshot(now)
	if err != nil {
		t.Fatal(err)
	}
	var between Snapshot
	var bErr error
	h.beforeWrite = func(n int) {
		if n == 1 {
			_, _, bErr = b.AcquireAndRestore(now, tenantA, key, w2)
			between, err = look.Snapshot(now)
		}
	}
	aRes, _, aErr := a.AcquireAndRestore(now, tenantA, key, w1)
	if bErr != nil || err != nil {
		t.Fatalf("coordinator B alone: %v %v", bErr, err)
	}
	after, err := look.Snapshot(now)
	if err != nil {
		t.Fatal(err)
	}
	if err := judgeStep(&before, &between); err != nil {
		return err
	}
	if err := judgeStep(&between, &after); err != nil {
		return err
	}
	if aErr == nil {
		return property.Violated(property.CMutualExclusion, "two concurrent acquires both succeeded (A holds fence %d)", aRes.Lease.Fence)
	}
	if CodeOf(aErr) != CodeAlreadyLeased {
		t.Fatalf("A lost the race with %v, want already leased", aErr)
	}
	return nil
}

// TestBugTable shows that every coord bug is caught: its scenario passes
// the oracle and every checker with no bug on, and with the bug on fails
// with a violation of one of the properties the registry names for it.
func TestBugTable(t *testing.T) {
	for _, b := range bugs.ForProtocol("coord") {
		scenario, ok := bugTable[b.Name]
		if !ok {
			t.Errorf("coord bug %s has no scenario", b.Name)
			continue
		}
		t.Run(b.Name, func(t *testing.T) {
			if err := scenario(t, DefaultConfig()); err != nil {
				t.Fatalf("without the bug: %v", err)
			}
			err := scenario(t, cfgWith(b.Name))
			var v *property.Violation
			if !errors.As(err, &v) {
				t.Fatalf("with the bug: no property violation (err = %v)", err)
			}
			if !slices.Contains(b.Properties, v.Property) {
				t.Fatalf("with the bug: %v; expected one of %v", err, b.Properties)
			}
			t.Logf("caught: %v", err)
		})
	}
}
