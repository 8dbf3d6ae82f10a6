package coord

import "shardsim/model/bugs"

// Pure run transitions, shared by every backend like the shard steps.

// RunChange is the result of a run transition.
type RunChange struct {
	Outcome Outcome
	// Next is the run's new state (zero on a replay).
	Next RunRecord
	// Created are the root shards register_shards creates.
	Created []ShardRecord
	Events  []Event
}

// NewRun validates cfg and builds the Initializing record of a new run.
// A zero lease duration in cfg takes defaultLease.
func NewRun(env StepEnv, run RunID, cfg RunConfig, defaultLease LogicalDuration) (RunChange, error) {
	if !cfg.Semantics.Valid() {
		return RunChange{}, newError(OpCreateRun, CoordError{Code: CodeInvalidArgument, Detail: "unknown cursor semantics"})
	}
	if cfg.LeaseDuration == 0 {
		cfg.LeaseDuration = defaultLease
	}
	if cfg.LeaseDuration == 0 {
		return RunChange{}, newError(OpCreateRun, CoordError{Code: CodeInvalidArgument, Detail: "lease duration is zero"})
	}
	rec := RunRecord{Tenant: env.Tenant, Run: run, Config: cfg, Status: RunInitializing, CreatedAt: env.Now}
	return RunChange{Next: rec, Events: []Event{runEvent(&rec, env.Now, EventRunCreated)}}, nil
}

// RunExists builds create_run's error for an existing run id.
func RunExists() error { return newError(OpCreateRun, CoordError{Code: CodeRunExists}) }

// RunNotFound builds op's "no such run" error.
func RunNotFound(op Operation) error { return newError(op, CoordError{Code: CodeRunNotFound}) }

// classifyRun runs the idempotency tiers on a run's op-log.
func classifyRun(env StepEnv, op Operation, rec *RunRecord, id OpID, kind OpKind, hash uint64) (Tier, error) {
	t := classifyOp(findRunOp(rec, id), kind, hash, env.Bugs)
	if t == TierConflict {
		return t, newError(op, CoordError{Code: CodeOpIDConflict})
	}
	return t, nil
}

// StepRegisterShards validates the manifest (at most maxShards shards) and
// activates the run with its root shards: Active, unleased, at the initial
// fence and cursor, with the run's cursor semantics. The run must be
// Initializing.
func StepRegisterShards(env StepEnv, rec *RunRecord, shards []InitialShard, maxShards int, id OpID) (RunChange, error) {
	hash := hashRegisterShards(shards)
	switch tier, err := classifyRun(env, OpRegisterShards, rec, id, OpKindRegisterShards, hash); {
	case err != nil:
		return RunChange{}, err
	case tier == TierReplay:
		return RunChange{Outcome: Replayed}, nil
	}
	if rec.Status != RunInitializing {
		return RunChange{}, newError(OpRegisterShards, CoordError{Code: CodeRunState, RunStatus: rec.Status})
	}
	if v := validateManifest(shards, maxShards); v != ManifestOK {
		return RunChange{}, newError(OpRegisterShards, CoordError{Code: CodeManifestInvalid, Manifest: v})
	}
	next := rec.Clone()
	next.Status = RunActive
	next.RootShards = make([]ShardID, len(shards))
	created := make([]ShardRecord, len(shards))
	for i, s := range shards {
		next.RootShards[i] = s.Shard
		created[i] = ShardRecord{
			Tenant: rec.Tenant, Run: rec.Run, Shard: s.Shard,
			Spec:   s.Spec.Clone(),
			Status: ShardActive, Fence: InitialFence,
			Semantics: rec.Config.Semantics,
		}
	}
	recordRunOp(&next, id, OpKindRegisterShards, hash, env.Now)
	ev := runEvent(rec, env.Now, EventRunActivated)
	ev.ShardCount = len(shards)
	return RunChange{Next: next, Created: created, Events: []Event{ev}}, nil
}

// StepRunTransition applies complete_run (Active -> Done), fail_run
// (Active -> Failed) or cancel_run (Initializing or Active -> Cancelled).
// Bug coord.run-reopen lets complete_run move any terminal run to Done.
func StepRunTransition(env StepEnv, rec *RunRecord, kind OpKind, id OpID) (RunChange, error) {
	var op Operation
	var to RunStatus
	var evKind EventKind
	allowed := rec.Status == RunActive
	switch kind {
	case OpKindCompleteRun:
		op, to, evKind = OpCompleteRun, RunDone, EventRunCompleted
		allowed = allowed || (rec.Status.Terminal() && env.Bugs.Has(bugs.CoordRunReopen))
	case OpKindFailRun:
		op, to, evKind = OpFailRun, RunFailed, EventRunFailed
	case OpKindCancelRun:
		op, to, evKind = OpCancelRun, RunCancelled, EventRunCancelled
		allowed = allowed || rec.Status == RunInitializing
	default:
		panic("coord: StepRunTransition of kind " + kind.String())
	}
	hash := hashRunTransition(kind)
	switch tier, err := classifyRun(env, op, rec, id, kind, hash); {
	case err != nil:
		return RunChange{}, err
	case tier == TierReplay:
		return RunChange{Outcome: Replayed}, nil
	}
	if !allowed {
		return RunChange{}, newError(op, CoordError{Code: CodeRunState, RunStatus: rec.Status})
	}
	next := rec.Clone()
	next.Status = to
	next.CompletedAt = Some(env.Now)
	recordRunOp(&next, id, kind, hash, env.Now)
	return RunChange{Next: next, Events: []Event{runEvent(rec, env.Now, evKind)}}, nil
}
