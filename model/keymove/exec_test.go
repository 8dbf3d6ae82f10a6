package keymove

import (
	"strings"
	"testing"

	"shardsim/model/bugs"
	"shardsim/simclock"
	"shardsim/simkv"
)

func TestPlannerMovesOnlyWhatTheTopologyChange(t *testing.T) {
	keys := make([]string, 200)
	for i := range keys {
		keys[i] = strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('0'+i/26))
	}
	p, err := NewPlan(keys, topo3, topo4)
	if err != nil {
		t.Fatal(err)
	}
	for _, mv := range p.Moves {
		if mv.Target != "s4" {
			t.Fatalf("scale-out moved %v to an old shard", mv)
		}
	}
	if n := len(p.Moves); n < 20 || n > 80 {
		t.Fatalf("adding a 4th shard moved %d of 200 keys", n)
	}
	q, _ := NewPlan(append([]string(nil), keys...), topo3, topo4)
	if q.ID != p.ID {
		t.Fatal("the same moves made a different plan id")
	}
	if _, err := NewPlan([]string{"a", "a"}, topo3, topo4); err == nil {
		t.Fatal("duplicate keys accepted")
	}
	if _, err := NewPlan([]string{"a"}, Topology{}, topo4); err == nil {
		t.Fatal("empty topology accepted")
	}
}

func TestVerificationModes(t *testing.T) {
	src := []byte("0123456789abcdefghijklmnopqrstuvwxyz")
	torn := src[:len(src)/2]
	ex := &Executor{plan: Plan{ID: "p"}}
	for _, m := range []VerificationMode{VerifyFull, VerifyHash, VerifySampled} {
		ex.opts.Verification = m
		if !ex.sameValue("k", src, append([]byte(nil), src...)) {
			t.Errorf("%v: equal values differ", m)
		}
		if ex.sameValue("k", src, torn) {
			t.Errorf("%v: a torn copy passed", m)
		}
	}
	// Sampled mode cannot see a changed byte outside its sample (its doc
	// says so): find one and show it.
	ex.opts.Verification = VerifySampled
	missed := false
	for pos := range src {
		b := append([]byte(nil), src...)
		b[pos] ^= 1
		if ex.sameValue("k", src, b) {
			missed = true
			break
		}
	}
	if !missed {
		t.Fatal("sampled verification read every byte of a 36-byte value")
	}
}

func TestLogsNeverNameAKey(t *testing.T) {
	w := newTestWorld(t, 20, topo3, topo4, map[string]bool{"user002": true})
	var lines []string
	cfg := Config{Options: DefaultOptions(), Hooks: Hooks{Log: func(kind, detail string) { lines = append(lines, kind+" "+detail) }}}
	cfg.Options.RedactShards = true
	ex, _ := NewExecutor(w.plan, cfg)
	if _, err := ex.Run(w.runtime()); err != nil {
		t.Fatal(err)
	}
	if len(lines) < len(w.plan.Moves) {
		t.Fatalf("only %d log lines", len(lines))
	}
	for _, l := range lines {
		for _, k := range w.keys {
			if strings.Contains(l, k) {
				t.Fatalf("log line names key %q: %s", k, l)
			}
		}
		if strings.Contains(l, "s4") {
			t.Fatalf("log line names a shard with shard redaction on: %s", l)
		}
	}
}

func TestTransientFailuresRetryThenFail(t *testing.T) {
	w := newTestWorld(t, 30, topo3, topo4, nil)
	rt := w.runtime()
	ch := simclock.NewSeeded(7)
	for _, id := range sortedShardIDs(rt.ShardKV) {
		rt.ShardKV[id] = simkv.NewDirectFaulty(rt.ShardKV[id].(*simkv.Direct), simkv.DirectFaults{Refuse: 0.25}, ch.Fork(string(id)))
	}
	cfg := Config{Options: DefaultOptions()}
	cfg.Options.MaxRetries = 2
	ex, _ := NewExecutor(w.plan, cfg)
	sum, err := ex.Run(rt)
	if err != nil {
		t.Fatal(err)
	}
	m := ex.Metrics()
	if m.Retries == 0 || len(sum.Failed) == 0 || sum.Done == 0 {
		t.Fatalf("retries %d, failed %d, done %d: want all three", m.Retries, len(sum.Failed), sum.Done)
	}
	for _, f := range sum.Failed {
		mv := w.plan.Moves[f.Index]
		if f.Reason == "not-found" || w.owner(t, mv.Key) != mv.Source {
			t.Fatalf("failed key %s: reason %s, owner %s", mv.Key, f.Reason, w.owner(t, mv.Key))
		}
	}
}

// hookKV runs before() ahead of every transaction it passes on.
type hookKV struct {
	simkv.KV
	before func(r simkv.TxnRequest) error
}

func (h hookKV) Txn(r simkv.TxnRequest) (*simkv.TxnResponse, error) {
	if err := h.before(r); err != nil {
		return nil, err
	}
	return h.KV.Txn(r)
}

// raceOnce makes one client write land on key's source just before the
// executor's first fence of it.
func raceOnce(t *testing.T, w *testWorld, rt *Sequential, mv KeyMove) {
	fired := false
	src := rt.ShardKV[mv.Source]
	rt.ShardKV[mv.Source] = hookKV{KV: src, before: func(r simkv.TxnRequest) error {
		if !fired && len(r.Success) == 1 && r.Success[0].Put != nil && string(r.Success[0].Put.Value) == CtlMoved(w.plan.ID) {
			fired = true
			mustApply(t, w.shards[mv.Source], simkv.Request{Put: &simkv.PutRequest{Key: DataKey(mv.Key), Value: []byte("racing-write")}})
		}
		return nil
	}}
}

func TestAWriteBetweenVerifyAndSwapIsRecopied(t *testing.T) {
	for _, bug := range []bool{false, true} {
		w := newTestWorld(t, 20, topo3, topo4, nil)
		rt := w.runtime()
		mv := w.plan.Moves[0]
		raceOnce(t, w, rt, mv)
		cfg := Config{Options: DefaultOptions()}
		if bug {
			cfg.Bugs = bugs.MustParse(bugs.KeymoveSwapIgnoresSourceRevision)
		}
		ex, _ := NewExecutor(w.plan, cfg)
		if _, err := ex.Run(rt); err != nil {
			t.Fatal(err)
		}
		data, _, _ := w.read(w.owner(t, mv.Key), mv.Key)
		switch {
		case !bug && (data != "racing-write" || ex.Metrics().RacingWrites == 0):
			t.Fatalf("with the fix the racing write is lost: owner holds %q, racing writes %d", data, ex.Metrics().RacingWrites)
		case bug && data == "racing-write":
			t.Fatal("without the fix the racing write survived: the test shows nothing")
		}
	}
}

func TestUnrecoverableSwapRollsBackToCopied(t *testing.T) {
	for _, refusals := range []int{2, 1000} {
		w := newTestWorld(t, 20, topo3, topo4, nil)
		rt := w.runtime()
		n := 0
		rt.MetaKV = hookKV{KV: rt.MetaKV, before: func(r simkv.TxnRequest) error {
			if len(r.Success) > 0 && r.Success[0].Put != nil && strings.Contains(string(r.Success[0].Put.Key), "/map/") && n < refusals {
				n++
				return simkv.ErrUnavailable
			}
			return nil
		}}
		cfg := Config{Options: DefaultOptions()}
		cfg.Options.MaxRetries = 1
		ex, _ := NewExecutor(w.plan, cfg)
		sum, err := ex.Run(rt)
		if err != nil {
			t.Fatal(err)
		}
		if ex.Metrics().Rollbacks == 0 {
			t.Fatalf("%d refusals: no rollback", refusals)
		}
		if refusals > 100 {
			for _, mv := range w.plan.Moves {
				_, _, ctl := w.read(mv.Source, mv.Key)
				if w.owner(t, mv.Key) != mv.Source || ctl != CtlOpen {
					t.Fatalf("after failed swaps %s: owner %s, source control %q", mv.Key, w.owner(t, mv.Key), ctl)
				}
			}
			if len(sum.Failed) != len(w.plan.Moves) {
				t.Fatalf("every swap refused, yet %d of %d keys failed", len(sum.Failed), len(w.plan.Moves))
			}
		} else if sum.Done != len(w.plan.Moves) {
			t.Fatalf("two refused swaps: %d of %d done", sum.Done, len(w.plan.Moves))
		}
	}
}

func TestForceSwapOnVerificationFailure(t *testing.T) {
	for _, force := range []bool{false, true} {
		w := newTestWorld(t, 20, topo3, topo4, nil)
		rt := w.runtime()
		mv := w.plan.Moves[0]
		dst := rt.ShardKV[mv.Target]
		rt.ShardKV[mv.Target] = tearKV{KV: dst, key: mv.Key}
		cfg := Config{Options: DefaultOptions()}
		cfg.Options.ForceSwapOnVerificationFailure = force
		ex, _ := NewExecutor(w.plan, cfg)
		sum, err := ex.Run(rt)
		if err != nil {
			t.Fatal(err)
		}
		st := ex.Checkpoint().Keys[0]
		if force != (st.State == Done && st.Forced && sum.Forced == 1) || (!force && st.Reason != "verify") {
			t.Fatalf("force=%v: key ends %v forced=%v reason=%s", force, st.State, st.Forced, st.Reason)
		}
		if ex.Metrics().VerificationFailures != int64(cfg.Options.MaxRetries+1) {
			t.Fatalf("verification failures %d", ex.Metrics().VerificationFailures)
		}
	}
}

// tearKV truncates every copy of one key.
type tearKV struct {
	simkv.KV
	key string
}

func (k tearKV) Txn(r simkv.TxnRequest) (*simkv.TxnResponse, error) {
	if len(r.Success) == 2 && r.Success[0].Put != nil && string(r.Success[0].Put.Key) == string(DataKey(k.key)) {
		p := *r.Success[0].Put
		p.Value = p.Value[:1]
		r.Success = append([]simkv.RequestOp{{Put: &p}}, r.Success[1:]...)
	}
	return k.KV.Txn(r)
}
