package keymove

import (
	"testing"

	"shardsim/model/bugs"
	"shardsim/simkv"
)

// crashSignal unwinds an executor at a chosen request, as a process crash.
type crashSignal struct{}

// crashKV counts requests across every store of a runtime and crashes the
// executor at request number at: before the request is sent, or (after)
// once it is applied and before its answer is seen.
type crashKV struct {
	simkv.KV
	n     *int
	at    int
	after bool
}

func (k crashKV) tick(apply func()) {
	*k.n++
	if *k.n != k.at {
		apply()
		return
	}
	if k.after {
		apply()
	}
	panic(crashSignal{})
}

func (k crashKV) Range(r simkv.RangeRequest) (resp *simkv.RangeResponse, err error) {
	k.tick(func() { resp, err = k.KV.Range(r) })
	return
}

func (k crashKV) Txn(r simkv.TxnRequest) (resp *simkv.TxnResponse, err error) {
	k.tick(func() { resp, err = k.KV.Txn(r) })
	return
}

// crashing wraps every KV of rt.
func crashing(rt *Sequential, n *int, at int, after bool) *Sequential {
	out := &Sequential{MetaKV: crashKV{rt.MetaKV, n, at, after}, ShardKV: map[ShardID]simkv.KV{}}
	for id, kv := range rt.ShardKV {
		out.ShardKV[id] = crashKV{kv, n, at, after}
	}
	return out
}

// runUntilCrash runs an executor and reports whether it crashed.
func runUntilCrash(t *testing.T, plan Plan, cfg Config, rt Runtime) (crashed bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crashSignal); !ok {
				panic(r)
			}
			crashed = true
		}
	}()
	ex, err := NewExecutor(plan, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ex.Run(rt); err != nil {
		t.Fatalf("run: %v", err)
	}
	return false
}

// finalState is what a finished plan leaves: each key's owner, the owner's
// data and whether the key was reported Done.
type finalState map[string]string

func (w *testWorld) final(t *testing.T, plan Plan) finalState {
	out := finalState{}
	for _, mv := range plan.Moves {
		owner := w.owner(t, mv.Key)
		data, found, ctl := w.read(owner, mv.Key)
		out[mv.Key] = string(owner) + "|" + data + "|" + ctl
		if !found {
			out[mv.Key] += "|missing"
		}
	}
	return out
}

// TestResumeFromEveryCrashPoint crashes the executor at every request of a
// run, before the request and after it is applied, resumes with a fresh
// executor, and requires the outcome of an uncrashed run (KM.Idempotent at
// unit level: whatever the checkpoint is behind by, redoing is safe).
func TestResumeFromEveryCrashPoint(t *testing.T) {
	cfg := Config{Options: DefaultOptions()}
	cfg.Options.SwapBatchSize = 2
	cfg.Options.CopyConcurrency = 3
	missing := map[string]bool{"user003": true}
	ref := newTestWorld(t, 24, topo3, topo4, missing)
	if runUntilCrash(t, ref.plan, cfg, ref.runtime()) {
		t.Fatal("reference run crashed")
	}
	want := ref.final(t, ref.plan)
	diffs := crashPointDiffs(t, cfg, missing, want)
	if diffs != 0 {
		t.Fatalf("%d crash points resumed to a different outcome", diffs)
	}
}

// TestCrashPointsCatchCheckpointBeforeEffect: the same harness finds the
// injected keymove.checkpoint-before-effect, so the test above can fail.
func TestCrashPointsCatchCheckpointBeforeEffect(t *testing.T) {
	cfg := Config{Options: DefaultOptions(), Bugs: bugs.MustParse(bugs.KeymoveCheckpointBeforeEffect)}
	cfg.Options.SwapBatchSize = 2
	ref := newTestWorld(t, 24, topo3, topo4, nil)
	runUntilCrash(t, ref.plan, Config{Options: cfg.Options}, ref.runtime())
	if diffs := crashPointDiffs(t, cfg, nil, ref.final(t, ref.plan)); diffs == 0 {
		t.Fatal("no crash point exposed keymove.checkpoint-before-effect")
	}
}

func crashPointDiffs(t *testing.T, cfg Config, missing map[string]bool, want finalState) int {
	diffs := 0
	for at := 1; ; at++ {
		crashedSomewhere := false
		for _, after := range []bool{false, true} {
			w := newTestWorld(t, 24, topo3, topo4, missing)
			n := 0
			if !runUntilCrash(t, w.plan, cfg, crashing(w.runtime(), &n, at, after)) {
				continue
			}
			crashedSomewhere = true
			if runUntilCrash(t, w.plan, cfg, w.runtime()) {
				t.Fatal("resume crashed without a crash point")
			}
			got := w.final(t, w.plan)
			for k, v := range want {
				if got[k] != v {
					diffs++
					t.Logf("crash at request %d (after=%v): %s ends %q, want %q", at, after, k, got[k], v)
					break
				}
			}
		}
		if !crashedSomewhere {
			return diffs
		}
	}
}
