package coord

import (
	"fmt"
	"slices"
	"testing"

	"shardsim/model/bugs"
)

func TestClassifyOp(t *testing.T) {
	e := Some(OpLogEntry{Op: 1, Kind: OpKindCheckpoint, PayloadHash: 42})
	for _, tc := range []struct {
		name  string
		found Opt[OpLogEntry]
		kind  OpKind
		hash  uint64
		b     bugs.Set
		want  Tier
	}{
		{"absent", None[OpLogEntry](), OpKindCheckpoint, 42, bugs.None, TierNew},
		{"same payload", e, OpKindCheckpoint, 42, bugs.None, TierReplay},
		{"other payload", e, OpKindCheckpoint, 43, bugs.None, TierConflict},
		{"other kind", e, OpKindComplete, 42, bugs.None, TierConflict},
		{"conflict ignored", e, OpKindCheckpoint, 43, bugs.MustParse(bugs.CoordOpIDConflictIgnored), TierNew},
	} {
		if got := classifyOp(tc.found, tc.kind, tc.hash, tc.b); got != tc.want {
			t.Errorf("%s: %v want %v", tc.name, got, tc.want)
		}
	}
}

func TestPayloadHashesAreDomainSeparated(t *testing.T) {
	c := cur("k")
	hashes := []uint64{
		hashCheckpoint(c), hashComplete(c), hashPark(ParkPoisoned), hashUnpark(),
		hashSplitReplace(SplitReplacePlan{[]ShardSpec{spec("a", "b"), spec("b", "c")}}),
		hashSplitResidual(SplitResidualPlan{spec("a", "b"), spec("b", "c")}),
		hashRegisterShards([]InitialShard{{1, spec("a", "b")}}),
		hashRunTransition(OpKindCompleteRun), hashRunTransition(OpKindFailRun), hashRunTransition(OpKindCancelRun),
		hashCheckpoint(Cursor{LastKey: bs("k"), Token: bs("t")}),
		hashCheckpoint(cur("kt")),
		// Length prefixes keep field boundaries apart.
		hashSplitResidual(SplitResidualPlan{spec("a", "bb"), spec("b", "c")}),
		hashSplitResidual(SplitResidualPlan{spec("a", "b"), spec("bb", "c")}),
	}
	seen := map[uint64]int{}
	for i, h := range hashes {
		if j, dup := seen[h]; dup {
			t.Fatalf("hash %d equals hash %d", i, j)
		}
		seen[h] = i
	}
	if hashCheckpoint(c) != hashCheckpoint(cur("k")) {
		t.Fatal("hash is not deterministic")
	}
}

func TestReplayTiers(t *testing.T) {
	forBackends(t, func(t *testing.T, b backend) {
		w := newWorld(t, b.make(t, DefaultConfig()))
		l := w.acquire(1, w1)
		out, evs, err := w.c.Checkpoint(w.now, tenantA, l, cur("c"), 10)
		if err != nil || out != Executed || len(evs) != 1 {
			t.Fatal(out, evs, err)
		}
		before := w.record(1)
		out, evs, err = w.c.Checkpoint(w.now, tenantA, l, cur("c"), 10)
		if err != nil || out != Replayed || evs != nil {
			t.Fatalf("replay: %v %v %v", out, evs, err)
		}
		if after := w.record(1); !after.OpLog.Equal(before.OpLog) {
			t.Fatal("replay touched the op-log")
		}
		_, _, err = w.c.Checkpoint(w.now, tenantA, l, cur("d"), 10)
		wantCode(t, err, CodeOpIDConflict)
		_, _, err = w.c.Complete(w.now, tenantA, l, cur("c"), 10)
		wantCode(t, err, CodeOpIDConflict)
	})
}

func TestReplayBeforeLeaseValidation(t *testing.T) {
	forBackends(t, func(t *testing.T, b backend) {
		t.Run("after expiry and takeover", func(t *testing.T) {
			w := newWorld(t, b.make(t, DefaultConfig()))
			l := w.acquire(1, w1)
			_, _, err := w.c.Checkpoint(w.now, tenantA, l, cur("c"), 10)
			wantCode(t, err, codeNone)
			w.now += 50
			w.acquire(1, w2) // fence moves on
			out, _, err := w.c.Checkpoint(w.now, tenantA, l, cur("c"), 10)
			if err != nil || out != Replayed {
				t.Fatalf("zombie retry of its own op: %v %v", out, err)
			}
			// A new op from the zombie is fenced out.
			_, _, err = w.c.Checkpoint(w.now, tenantA, l, cur("d"), 11)
			wantCode(t, err, CodeStaleFence)
		})
		t.Run("after terminal", func(t *testing.T) {
			w := newWorld(t, b.make(t, DefaultConfig()))
			l := w.acquire(1, w1)
			_, _, err := w.c.Complete(w.now, tenantA, l, cur("c"), 10)
			wantCode(t, err, codeNone)
			out, _, err := w.c.Complete(w.now+100, tenantA, l, cur("c"), 10)
			if err != nil || out != Replayed {
				t.Fatalf("complete retry: %v %v", out, err)
			}
			l2 := w.acquire(2, w1)
			_, _, err = w.c.ParkShard(w.now, tenantA, l2, ParkOther, 11)
			wantCode(t, err, codeNone)
			out, _, err = w.c.ParkShard(w.now, tenantA, l2, ParkOther, 11)
			if err != nil || out != Replayed {
				t.Fatalf("park retry: %v %v", out, err)
			}
		})
		t.Run("split_replace forever", func(t *testing.T) {
			w := newWorld(t, b.make(t, DefaultConfig()))
			l := w.acquire(1, w1)
			plan := SplitReplacePlan{[]ShardSpec{spec("a", "f"), spec("f", "m")}}
			first, _, err := w.c.SplitReplace(w.now, tenantA, l, plan, 10)
			wantCode(t, err, codeNone)
			again, evs, err := w.c.SplitReplace(w.now+1000, tenantA, l, plan, 10)
			if err != nil || again.Outcome != Replayed || !slices.Equal(again.Children, first.Children) || evs != nil {
				t.Fatalf("split replay: %+v %v %v", again, evs, err)
			}
			_, _, err = w.c.SplitReplace(w.now, tenantA, l, SplitReplacePlan{[]ShardSpec{spec("a", "g"), spec("g", "m")}}, 10)
			wantCode(t, err, CodeOpIDConflict)
			if n := len(w.record(1).Spawned); n != 2 {
				t.Fatalf("spawned %d", n)
			}
		})
	})
}

func TestOpLogEviction(t *testing.T) {
	forBackends(t, func(t *testing.T, b backend) {
		w := newWorld(t, b.make(t, DefaultConfig()))
		l := w.acquire(1, w1)
		key := func(i int) string { return fmt.Sprintf("b%03d", i) }
		for i := 0; i < shardOpLogCap+1; i++ {
			_, _, err := w.c.Checkpoint(w.now, tenantA, l, cur(key(i)), OpID(100+i))
			wantCode(t, err, codeNone)
		}
		r := w.record(1)
		if r.OpLog.Len() != shardOpLogCap {
			t.Fatalf("op-log len %d", r.OpLog.Len())
		}
		if _, ok := r.OpLog.Find(100); ok {
			t.Fatal("oldest entry not evicted")
		}
		if e := r.OpLog.Entries(); e[0].Op != 101 || e[len(e)-1].Op != OpID(100+shardOpLogCap) {
			t.Fatalf("entries %v", e)
		}
		// The evicted op id is new again: with the cursor since advanced,
		// re-executing its old checkpoint is refused as a regression, and
		// the refusal is logged (OpError), evicting op 101.
		_, _, err := w.c.Checkpoint(w.now, tenantA, l, cur(key(0)), 100)
		wantCode(t, err, CodeCursorRegression)
		r = w.record(1)
		if e, ok := r.OpLog.Find(100); !ok || e.Result != OpError || e.Refusal != CodeCursorRegression {
			t.Fatalf("logged refusal %+v %v", e, ok)
		}
		// Its retry answers the same refusal from the op-log.
		_, _, err = w.c.Checkpoint(w.now, tenantA, l, cur(key(0)), 100)
		wantCode(t, err, CodeCursorRegression)
		// Still held ops replay.
		out, _, err := w.c.Checkpoint(w.now, tenantA, l, cur(key(2)), 102)
		if err != nil || out != Replayed {
			t.Fatalf("replay of held op: %v %v", out, err)
		}
	})
}

func TestResidualReplayAfterEviction(t *testing.T) {
	forBackends(t, func(t *testing.T, b backend) {
		w := newWorld(t, b.make(t, DefaultConfig()))
		l := w.acquire(1, w1)
		plan := SplitResidualPlan{spec("a", "g"), spec("g", "m")}
		first, _, err := w.c.SplitResidual(w.now, tenantA, l, plan, 50)
		wantCode(t, err, codeNone)
		for i := 0; i < shardOpLogCap; i++ {
			_, _, err := w.c.Checkpoint(w.now, tenantA, l, cur(fmt.Sprintf("b%02d", i)), OpID(60+i))
			wantCode(t, err, codeNone)
		}
		if r := w.record(1); func() bool { _, ok := r.OpLog.Find(50); return ok }() {
			t.Fatal("split_residual entry not evicted")
		}
		// Found through the spawned list: the same residual, no second one,
		// and it is found before lease validation (the lease has expired
		// and another worker holds the shard).
		w.now += 50
		w.acquire(1, w2)
		res, evs, err := w.c.SplitResidual(w.now, tenantA, l, plan, 50)
		if err != nil || res.Outcome != Replayed || res.Residual != first.Residual || evs != nil {
			t.Fatalf("probe replay: %+v %v %v", res, evs, err)
		}
		if n := len(w.record(1).Spawned); n != 1 {
			t.Fatalf("spawned %d", n)
		}
		// A different residual under the same op id is a conflict.
		_, _, err = w.c.SplitResidual(w.now, tenantA, l, SplitResidualPlan{spec("a", "e"), spec("e", "g")}, 50)
		wantCode(t, err, CodeOpIDConflict)
		// The probe still finds the residual after the residual itself
		// shrank by a split of its own (its start never moves).
		rl := w.acquire(first.Residual, w1)
		_, _, err = w.c.SplitResidual(w.now, tenantA, rl, SplitResidualPlan{spec("g", "j"), spec("j", "m")}, 51)
		wantCode(t, err, codeNone)
		res, _, err = w.c.SplitResidual(w.now, tenantA, l, plan, 50)
		if err != nil || res.Outcome != Replayed || res.Residual != first.Residual {
			t.Fatalf("probe replay after residual shrank: %+v %v", res, err)
		}
	})
}

func TestRunOpLogEviction(t *testing.T) {
	l := newRunOpLog()
	for i := 0; i < runOpLogCap+3; i++ {
		l.Push(OpLogEntry{Op: OpID(i), Kind: OpKindCancelRun})
	}
	if l.Len() != runOpLogCap {
		t.Fatalf("len %d", l.Len())
	}
	e := l.Entries()
	if e[0].Op != 3 || e[runOpLogCap-1].Op != runOpLogCap+2 {
		t.Fatalf("entries %v", e)
	}
}

func TestOpLogRing(t *testing.T) {
	var l ShardOpLog
	for i := 0; i < 40; i++ {
		l.Push(OpLogEntry{Op: OpID(i)})
		want := max(0, i+1-shardOpLogCap)
		if got := l.Entries(); got[0].Op != OpID(want) || got[len(got)-1].Op != OpID(i) || len(got) != min(i+1, shardOpLogCap) {
			t.Fatalf("after %d pushes: %v", i+1, got)
		}
	}
	l.Remove(30)
	if _, ok := l.Find(30); ok || l.Len() != shardOpLogCap-1 {
		t.Fatal("remove failed")
	}
	l.Remove(999) // absent: no-op
	if l.Len() != shardOpLogCap-1 {
		t.Fatal("remove of absent entry changed the log")
	}
	if !l.Equal(newShardOpLog(l.Entries()...)) {
		t.Fatal("equal logs with different ring offsets differ")
	}
}
