package coord

import "slices"

// RunConfig is a run's configuration, fixed at create_run.
type RunConfig struct {
	Semantics CursorSemantics
	// LeaseDuration is how long an acquire or renew leases a shard. Zero
	// in a create_run request means Config.DefaultLeaseDuration; the stored
	// value is always positive.
	LeaseDuration LogicalDuration
	// MaxShardRetries is carried for workers and drivers (for example to
	// decide when to park with ParkTooManyErrors); the coordinator stores
	// it and does not act on it.
	MaxShardRetries uint32
}

// RunRecord is the authoritative record of a run.
type RunRecord struct {
	Tenant      TenantID
	Run         RunID
	Config      RunConfig
	Status      RunStatus
	CreatedAt   LogicalTime
	CompletedAt Opt[LogicalTime] // set iff Status is terminal
	RootShards  []ShardID        // manifest order; set by register_shards
	OpLog       RunOpLog
}

// Clone returns a deep copy.
func (r *RunRecord) Clone() RunRecord {
	c := *r
	if len(r.RootShards) > 0 {
		c.RootShards = slices.Clone(r.RootShards)
	} else {
		c.RootShards = nil
	}
	return c
}

// AssertInvariants checks the run record's structural invariants: known
// discriminants; a positive lease duration; completion time set iff
// terminal and not before creation; no root shards while Initializing and
// at least one once Active, Done or Failed (a run cancelled while
// initializing has none); root ids unique and not derived; and an op-log of
// run kinds with unique op ids.
func (r *RunRecord) AssertInvariants() error {
	if !r.Status.Valid() {
		return invariantf("unknown run status %d", r.Status)
	}
	if !r.Config.Semantics.Valid() {
		return invariantf("unknown cursor semantics %d", r.Config.Semantics)
	}
	if r.Config.LeaseDuration == 0 {
		return invariantf("run lease duration is zero")
	}
	if r.CompletedAt.Set != r.Status.Terminal() {
		return invariantf("completion time present=%t with run status %s", r.CompletedAt.Set, r.Status)
	}
	if r.CompletedAt.Set && r.CompletedAt.Val < r.CreatedAt {
		return invariantf("run completed before it was created")
	}
	switch r.Status {
	case RunInitializing:
		if len(r.RootShards) != 0 {
			return invariantf("initializing run has root shards")
		}
	case RunActive, RunDone, RunFailed:
		if len(r.RootShards) == 0 {
			return invariantf("%s run has no root shards", r.Status)
		}
	}
	for i, id := range r.RootShards {
		if id.IsDerived() {
			return invariantf("root shard %s is a derived id", id)
		}
		if slices.Contains(r.RootShards[:i], id) {
			return invariantf("root shard %s listed twice", id)
		}
	}
	if r.OpLog.Len() > runOpLogCap {
		return invariantf("run op-log holds %d entries", r.OpLog.Len())
	}
	return r.OpLog.r.check(OpKind.RunKind)
}

// RunTerminalEvaluation says whether a run's shards have settled.
type RunTerminalEvaluation uint8

const (
	// StillActive: some shard is still Active.
	StillActive RunTerminalEvaluation = iota
	// HasFailures: every shard settled and at least one is Parked.
	HasFailures
	// AllDone: every shard is Done or Split.
	AllDone
)

// String names the evaluation.
func (e RunTerminalEvaluation) String() string {
	switch e {
	case StillActive:
		return "still-active"
	case HasFailures:
		return "has-failures"
	case AllDone:
		return "all-done"
	}
	return "evaluation(?)"
}

// RunProgress aggregates a run's shards by state.
type RunProgress struct {
	Status    RunStatus
	Total     int
	Active    int // Active, whether leased or not
	Leased    int // Active with a live lease at the time asked
	Done      int
	Split     int
	Parked    int
	Terminal  RunTerminalEvaluation
	RootCount int
	// Watermark is how far the run's key space has been processed from
	// its first root's start (see Watermark).
	Watermark Watermark
}

// evaluateRunTerminal decides from progress counts whether the run's shards
// have settled: StillActive while any shard is Active, HasFailures when all
// settled with at least one Parked, AllDone otherwise.
func evaluateRunTerminal(p RunProgress) RunTerminalEvaluation {
	switch {
	case p.Active > 0:
		return StillActive
	case p.Parked > 0:
		return HasFailures
	}
	return AllDone
}

// Tally adds one shard to the progress counts.
func (p *RunProgress) Tally(r *ShardRecord, now LogicalTime) {
	p.Total++
	switch r.Status {
	case ShardActive:
		p.Active++
		if r.Lease.Set && r.Lease.Val.Live(now) {
			p.Leased++
		}
	case ShardDone:
		p.Done++
	case ShardSplit:
		p.Split++
	case ShardParked:
		p.Parked++
	}
}

// ShardSelect picks which shards ListShards returns.
type ShardSelect uint8

const (
	// SelectAll returns every shard.
	SelectAll ShardSelect = iota
	// SelectActive returns shards in the non-terminal Active state.
	SelectActive
	// SelectAvailable returns shards that could be acquired now.
	SelectAvailable
	// SelectParked returns Parked shards.
	SelectParked
)

// ShardFilter selects shards for ListShards.
type ShardFilter struct {
	Select   ShardSelect
	RootOnly bool // only shards that are not derived
}

// FilterAll returns every shard.
func FilterAll() ShardFilter { return ShardFilter{Select: SelectAll} }

// FilterActive returns Active shards.
func FilterActive() ShardFilter { return ShardFilter{Select: SelectActive} }

// FilterAvailable returns shards that could be acquired now.
func FilterAvailable() ShardFilter { return ShardFilter{Select: SelectAvailable} }

// FilterParked returns Parked shards.
func FilterParked() ShardFilter { return ShardFilter{Select: SelectParked} }

// Matches reports whether r passes the filter at now.
func (f ShardFilter) Matches(r *ShardRecord, now LogicalTime) bool {
	if f.RootOnly && r.Shard.IsDerived() {
		return false
	}
	switch f.Select {
	case SelectActive:
		return r.Status == ShardActive
	case SelectAvailable:
		return r.Available(now)
	case SelectParked:
		return r.Status == ShardParked
	}
	return true
}
