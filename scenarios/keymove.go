package scenarios

import (
	"fmt"
	"time"

	"shardsim/checker/keymovecheck"
	"shardsim/model/keymove"
	"shardsim/property"
	"shardsim/simclock"
)

// kmProperties are the properties the key-migration scenarios judge.
var kmProperties = []property.Name{
	property.KMSingleSwap, property.KMNoDualMapping, property.KMVerifiedBeforeSwap, property.KMNoLoss,
	property.KMIdempotent, property.KMCompletes, property.KMLinearizable,
}

var kmShapes = []kmShape{
	{
		name:        "keymove",
		description: "a key-level migration plan (seed 002) moves keys between shard stores while clients read and write them, through executor crashes, lost and ambiguous etcd and shard requests, shard outages, a shard that fails for good, torn copies and verification mismatches, then heal",
		healAt:      3 * time.Second, convergeWithin: 20 * time.Second,
		crashOn: 0.6, crashMax: 0.08, netOn: 0.6, outageOn: 0.5, deadOn: 0.25, tornOn: 0.6, maxKeys: 40,
	},
	{
		name:        "keymove-resume",
		description: "the keymove world with the executor crashing often and little else going wrong: every step must be safe to redo from whatever checkpoint the crash left",
		healAt:      3 * time.Second, convergeWithin: 20 * time.Second,
		crashOn: 1, crashMax: 0.25, netOn: 0.3, outageOn: 0.2, deadOn: 0.1, tornOn: 0.5, maxKeys: 30,
	},
}

func init() {
	for _, sh := range kmShapes {
		sh := sh
		Register(Scenario{Name: sh.name, Description: sh.description, Properties: kmProperties,
			Run: func(cfg Config) (Result, error) { return runKeymove(sh, cfg) }})
	}
}

func runKeymove(sh kmShape, cfg Config) (Result, error) {
	for _, name := range cfg.Bugs.Names() {
		if !kmBugApplies(name) {
			return Result{}, fmt.Errorf("bug %s does not apply to scenario %s", name, sh.name)
		}
	}
	end := simclock.Time(sh.healAt + sh.convergeWithin)
	w := NewWorld(sh.name, cfg, simclock.Budget{MaxTime: end, MaxEvents: 3_000_000})
	defer w.Loop.Close()
	opts := drawKMOptions(w.Swarm, sh)
	if err := w.OptionsError(); err != nil {
		return Result{}, err
	}
	kw, err := buildKMWorld(w, sh, opts, cfg)
	if err != nil {
		return Result{}, err
	}
	w.Run()
	kw.judge(cfg)
	kw.stats()
	return w.Result(), nil
}

// judge runs the end-of-run checks, in order: KM.NoLoss, linearizability,
// then (if the plan ended) KM.Idempotent, then KM.Completes.
func (kw *kmWorld) judge(cfg Config) {
	w, d := kw.w, kw.durable
	if w.Failed() {
		return
	}
	if w.Fail(d.CheckNoLoss()); w.Failed() {
		return
	}
	linVerdict, linV := d.CheckLinearizable(kw.history(), cfg.checkTimeout())
	if linVerdict == property.VerdictViolation {
		w.Fail(linV)
		return
	}
	if kw.planDone() {
		if w.Fail(d.CheckIdempotent(keymovecheck.Rerun{Config: kw.exCfg})); w.Failed() {
			return
		}
	}
	if w.Fail(d.CheckCompletes(kw.summary)); w.Failed() {
		return
	}
	w.Judge(linVerdict, linV)
}

// stats publishes what the run did, so a sweep shows that every failure
// path of the executor ran.
func (kw *kmWorld) stats() {
	var m = kw.sumMetrics()
	w := kw.w
	for _, c := range []struct {
		name string
		v    int64
	}{
		{"keys", int64(len(kw.keys))}, {"keys_planned", int64(len(kw.plan.Moves))},
		{"keys_moved", int64(kw.movedKeys())}, {"keys_failed", int64(kw.failedKeys())},
		{"retries", m.Retries}, {"rollbacks", m.Rollbacks}, {"resumes", m.Resumes},
		{"verification_failures", m.VerificationFailures}, {"racing_writes", m.RacingWrites},
		{"forced", m.Forced}, {"checkpoints", m.Checkpoints}, {"swap_batches", m.SwapBatches},
		{"max_copy_concurrency", int64(m.MaxActiveCopyConcurrency)}, {"max_verify_concurrency", int64(m.MaxActiveVerifyConcurrency)},
		{"executor_runs", int64(len(kw.execs))}, {"executor_restarts", kw.restarts}, {"executor_aborts", kw.aborts},
		{"progress_events", kw.progress}, {"torn_copies", kw.tornN}, {"map_changes", int64(kw.durable.MapChanges)},
	} {
		w.Count(c.name, c.v)
	}
	for _, k := range []string{"writes_acked", "writes_ambiguous", "writes_failed", "writes_moved", "reads", "reads_failed"} {
		w.Count(k, kw.counts[k])
	}
	ms := kw.meta.Stats()
	w.Count("meta_calls", int64(ms.Calls))
	w.Count("meta_indeterminate", int64(ms.Indeterminate))
	var calls, indet int
	for _, id := range kw.ids {
		s := kw.shards[id].Stats()
		calls, indet = calls+s.Calls, indet+s.Indeterminate
	}
	w.Count("shard_calls", int64(calls))
	w.Count("shard_indeterminate", int64(indet))
}

func (kw *kmWorld) sumMetrics() (m keymove.Metrics) {
	for _, ex := range kw.execs {
		m.Add(ex.Metrics())
	}
	return m
}

// movedKeys counts plan items the map assigns to their target at the end.
func (kw *kmWorld) movedKeys() int {
	n := 0
	for _, mv := range kw.plan.Moves {
		if kw.durable.Owner(mv.Key) == mv.Target {
			n++
		}
	}
	return n
}

func (kw *kmWorld) failedKeys() int {
	if kw.summary == nil {
		return 0
	}
	return len(kw.summary.Failed)
}
