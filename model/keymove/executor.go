package keymove

import (
	"fmt"

	"shardsim/model/bugs"
)

// Executor runs one plan: copy and verify with bounded concurrency, swap
// the shard map in batches, checkpoint as it goes. One Executor value is
// one incarnation of the process: after a crash, build a new one with the
// same plan and call Run; it resumes from the checkpoint.
type Executor struct {
	plan  Plan
	opts  Options
	bugs  bugs.Set
	keys  Keyspace
	hooks Hooks
	m     Metrics

	ck       Checkpoint // in-memory states; ck.Seq is the last durable write
	ckRev    int64      // mod revision of the last checkpoint we wrote or read
	dirty    uint64     // transitions so far
	durable  uint64     // transitions covered by the last durable checkpoint
	lastCkpt int64      // clock of the last durable checkpoint
	lastProg int64      // clock of the last progress event
	epochRev int64      // mod revision of the swap epoch this incarnation set
	abort    error      // first fatal error of any worker

	copySem, verifySem, ckSem Sem
	resumed                   bool
	// mayBeFenced marks keys whose source this plan may have fenced: a
	// fence attempt landed or its answer was lost, or an earlier
	// incarnation left the key Swapping. Only those need a release.
	mayBeFenced map[int]bool
	unreleased  []int
}

// Config is what an executor needs besides its plan.
type Config struct {
	Options Options
	Bugs    bugs.Set
	Keys    Keyspace
	Hooks   Hooks
}

// NewExecutor returns an executor for plan. Options are validated.
func NewExecutor(plan Plan, cfg Config) (*Executor, error) {
	if err := cfg.Options.Validate(); err != nil {
		return nil, err
	}
	return &Executor{plan: plan, opts: cfg.Options, bugs: cfg.Bugs, keys: cfg.Keys, hooks: cfg.Hooks}, nil
}

// Metrics returns this incarnation's metrics.
func (e *Executor) Metrics() Metrics { return e.m }

// Checkpoint returns the in-memory checkpoint (a copy).
func (e *Executor) Checkpoint() Checkpoint { return e.ck.Clone() }

// Summary is what a finished run reports: the seed's "include in summary".
type Summary struct {
	PlanID   string
	Total    int
	Done     int
	Failed   []FailedKey
	Forced   int
	Complete bool
	// Unreleased lists Failed keys whose source this plan may have fenced
	// and could not reopen (their shard stayed unreachable).
	Unreleased []int
}

// FailedKey is one Failed key of a summary, by plan index (keys are not
// named: summaries are logged).
type FailedKey struct {
	Index  int
	Reason string
}

// maxRounds bounds the copy/verify/swap rounds: every round either moves a
// key forward or spends one of its budgets, so a run that needs more has a
// broken budget.
func (e *Executor) maxRounds() int {
	return 4*(e.opts.RaceBudget+3*e.opts.MaxRetries+4) + 8
}

// Run executes the plan to its end, resuming from the checkpoint if there
// is one. It returns an error when the run must stop before the end (a
// failure no retry cured); running it again resumes.
func (e *Executor) Run(rt Runtime) (Summary, error) {
	e.copySem = rt.NewSem(e.opts.CopyConcurrency)
	e.verifySem = rt.NewSem(e.opts.VerifyConcurrency)
	e.ckSem = rt.NewSem(1)
	if err := e.start(rt); err != nil {
		return e.summary(), err
	}
	for round := 0; !e.allTerminal(); round++ {
		if round >= e.maxRounds() && !e.bugs.Has(bugs.KeymoveRetryUnbounded) {
			return e.summary(), ErrStuck
		}
		e.copyVerifyPhase(rt)
		if e.abort == nil {
			e.swapPhase(rt)
		}
		if e.abort != nil {
			return e.summary(), e.abort
		}
	}
	if err := e.finish(rt); err != nil {
		return e.summary(), err
	}
	return e.summary(), nil
}

// start loads or creates the checkpoint, kills swaps a previous incarnation
// may have left in flight, and settles every key against the shard map.
func (e *Executor) start(rt Runtime) error {
	if err := e.load(rt); err != nil {
		return err
	}
	e.mayBeFenced = map[int]bool{}
	for i, ks := range e.ck.Keys {
		if ks.State == Swapping || (ks.State == Failed && ks.Reason == "swap") {
			e.mayBeFenced[i] = true
		}
	}
	if e.resumed {
		e.m.Resumes++
		e.log("resume", fmt.Sprintf("seq=%d last=%d", e.ck.Seq, e.ck.LastProcessedIndex))
	} else {
		e.m.KeysPlanned = int64(len(e.plan.Moves))
		e.log("plan", fmt.Sprintf("keys=%d", len(e.plan.Moves)))
	}
	if err := e.bumpEpoch(rt); err != nil {
		return err
	}
	if err := e.reconcile(rt); err != nil {
		return err
	}
	return e.persist(rt)
}

// finish releases what Failed keys may still hold and records the end.
func (e *Executor) finish(rt Runtime) error {
	for i, ks := range e.ck.Keys {
		if ks.State == Failed {
			if err := e.release(rt, i); err != nil {
				e.unreleased = append(e.unreleased, i)
				e.log("release-failed", e.redacted(i))
			}
		}
	}
	e.ck.Complete = true
	e.dirty++
	if err := e.persist(rt); err != nil {
		return err
	}
	e.emit(rt, true)
	e.log("complete", e.summary().String())
	return nil
}

func (e *Executor) allTerminal() bool {
	for _, ks := range e.ck.Keys {
		if !ks.State.Terminal() {
			return false
		}
	}
	return true
}

func (e *Executor) summary() Summary {
	s := Summary{PlanID: e.plan.ID, Total: len(e.plan.Moves), Complete: e.ck.Complete, Unreleased: e.unreleased}
	for i, ks := range e.ck.Keys {
		switch ks.State {
		case Done:
			s.Done++
		case Failed:
			s.Failed = append(s.Failed, FailedKey{Index: i, Reason: ks.Reason})
		}
		if ks.Forced && ks.State == Done {
			s.Forced++
		}
	}
	return s
}

// String renders the summary for logs (no key names).
func (s Summary) String() string {
	return fmt.Sprintf("plan=%s total=%d done=%d failed=%d forced=%d complete=%v", s.PlanID, s.Total, s.Done, len(s.Failed), s.Forced, s.Complete)
}

// log writes one redacted line.
func (e *Executor) log(kind, detail string) {
	if e.hooks.Log != nil {
		e.hooks.Log("keymove."+kind, detail)
	}
}

// redacted describes plan item i without naming its key.
func (e *Executor) redacted(i int) string {
	m := e.plan.Moves[i]
	return fmt.Sprintf("%s %s->%s", RedactKey(m.Key), redactShard(m.Source, e.opts.RedactShards), redactShard(m.Target, e.opts.RedactShards))
}
