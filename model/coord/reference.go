package coord

import (
	"bytes"
	"errors"
	"maps"
	"slices"

	"shardsim/model/bugs"
)

// Config configures a Reference.
type Config struct {
	// DefaultLeaseDuration is the lease duration of runs created with a
	// zero RunConfig.LeaseDuration.
	DefaultLeaseDuration LogicalDuration
	// Limits bound the number of shard records.
	Limits ShardLimits
	// ClaimCooldown is the least time between one worker's successful
	// claims in a tenant (zero: no cooldown).
	ClaimCooldown LogicalDuration
	// MaxManifestShards is the largest register_shards manifest (zero:
	// DefaultMaxManifestShards). Every backend refuses a larger one alike,
	// as an invalid manifest; the etcd backend's must also fit one
	// transaction (EtcdConfig.Validate checks it).
	MaxManifestShards int
	// Bugs are the injectable coord.* bugs to switch on.
	Bugs bugs.Set
}

// DefaultMaxManifestShards is the manifest limit of a zero
// Config.MaxManifestShards: well inside one etcd transaction at etcd's
// default --max-txn-ops of 128.
const DefaultMaxManifestShards = 64

// manifestLimit returns the manifest limit with its default applied.
func (c Config) manifestLimit() int {
	if c.MaxManifestShards <= 0 {
		return DefaultMaxManifestShards
	}
	return c.MaxManifestShards
}

// DefaultConfig returns a configuration with the default limits, a lease
// duration of 10 units and no cooldown or bugs.
func DefaultConfig() Config {
	return Config{
		DefaultLeaseDuration: 10,
		Limits:               ShardLimits{MaxPerTenant: defaultMaxShardsPerTenant, MaxTotal: defaultMaxTotalShards},
	}
}

// Validate checks that the configuration is usable.
func (c Config) Validate() error {
	if c.DefaultLeaseDuration == 0 {
		return errors.New("coord: config: default lease duration is zero")
	}
	if c.Limits.MaxPerTenant <= 0 || c.Limits.MaxTotal <= 0 {
		return errors.New("coord: config: shard limits must be positive")
	}
	return nil
}

// Reference is the in-memory reference implementation of the protocol and
// its executable specification. It is single-threaded by contract (the
// simulation drives one operation at a time) and deterministic.
//
// Every change is computed by the shared pure steps and checked before it
// is stored: each new or changed record must satisfy its invariants and
// follow legally from its previous state. A failed check is a bug in the
// coordinator and panics before anything is stored, so the stored state is
// always the last valid one. Bugs that deliberately produce such states
// (selfCheckBlinded) switch the check off, so the harness's checkers can
// find them.
type Reference struct {
	cfg       Config
	selfCheck bool
	tenants   map[TenantID]*tenantState
	total     int // shard records over all tenants
}

type tenantState struct {
	runs       map[RunID]*runState
	shardCount int
	lastClaim  map[WorkerID]LogicalTime
}

type runState struct {
	rec    RunRecord
	shards map[ShardID]*ShardRecord
	order  []ShardID // sorted shard ids, for deterministic listing
}

var _ Coordinator = (*Reference)(nil)

// NewReference returns an empty Reference.
func NewReference(cfg Config) (*Reference, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Reference{cfg: cfg, selfCheck: !selfCheckBlinded(cfg.Bugs), tenants: map[TenantID]*tenantState{}}, nil
}

// Config returns the configuration the reference was built with.
func (r *Reference) Config() Config { return r.cfg }

func (r *Reference) env(now LogicalTime, tenant TenantID) StepEnv {
	return StepEnv{Now: now, Tenant: tenant, Bugs: r.cfg.Bugs}
}

// shardEnv is env for an operation on a shard of run rs: it carries the
// run's status, so a shard of an ended run is refused.
func (r *Reference) shardEnv(now LogicalTime, tenant TenantID, rs *runState) StepEnv {
	env := r.env(now, tenant)
	env.Run = Some(rs.rec.Status)
	return env
}

func (r *Reference) run(tenant TenantID, run RunID) (*runState, bool) {
	t, ok := r.tenants[tenant]
	if !ok {
		return nil, false
	}
	rs, ok := t.runs[run]
	return rs, ok
}

func (r *Reference) shard(tenant TenantID, key ShardKey) (*runState, *ShardRecord, bool) {
	rs, ok := r.run(tenant, key.Run)
	if !ok {
		return nil, nil, false
	}
	rec, ok := rs.shards[key.Shard]
	return rs, rec, ok
}

func (r *Reference) tenant(t TenantID) *tenantState {
	ts, ok := r.tenants[t]
	if !ok {
		ts = &tenantState{runs: map[RunID]*runState{}, lastClaim: map[WorkerID]LogicalTime{}}
		r.tenants[t] = ts
	}
	return ts
}

// mustHold panics with a self-check failure unless the check is blinded.
func (r *Reference) mustHold(what string, err error) {
	if err != nil && r.selfCheck {
		panic(selfCheckFailure("reference", what, err))
	}
}

// checkShard asserts that next may replace old (nil for a new record).
func (r *Reference) checkShard(old, next *ShardRecord) {
	if err := shardSelfCheck(old, next); err != nil {
		r.mustHold(next.Shard.String(), err)
	}
}

// checkRun asserts that next may replace old (nil for a new record).
func (r *Reference) checkRun(old, next *RunRecord) {
	if err := runSelfCheck(old, next); err != nil {
		r.mustHold(next.Run.String(), err)
	}
}

// admit checks that created may be inserted into run rs of tenant: within
// the shard limits and with no id already taken.
func (r *Reference) admit(op Operation, tenant TenantID, rs *runState, created []ShardRecord) error {
	if len(created) == 0 {
		return nil
	}
	if v, ok := checkShardLimits(r.cfg.Limits, r.tenant(tenant).shardCount, r.total, len(created)); !ok {
		return newError(op, CoordError{Code: CodeShardLimit, Limit: v})
	}
	for i := range created {
		if _, taken := rs.shards[created[i].Shard]; taken {
			return newError(op, CoordError{Code: CodeIDCollision, Shard: created[i].Key()})
		}
	}
	return nil
}

// insert stores new shard records; admit and the self-check ran before.
func (r *Reference) insert(tenant TenantID, rs *runState, created []ShardRecord) {
	ts := r.tenant(tenant)
	for i := range created {
		rec := created[i]
		rs.shards[rec.Shard] = &rec
		at, _ := slices.BinarySearch(rs.order, rec.Shard)
		rs.order = slices.Insert(rs.order, at, rec.Shard)
	}
	ts.shardCount += len(created)
	r.total += len(created)
}

// Shards returns deep copies of every shard record, ordered by tenant,
// run and shard id.
func (r *Reference) Shards() ([]ShardRecord, error) {
	var out []ShardRecord
	for _, t := range r.sortedTenants() {
		ts := r.tenants[t]
		for _, run := range slices.Sorted(maps.Keys(ts.runs)) {
			rs := ts.runs[run]
			for _, id := range rs.order {
				out = append(out, rs.shards[id].Clone())
			}
		}
	}
	return out, nil
}

// Runs returns deep copies of every run record, ordered by tenant and run.
func (r *Reference) Runs() ([]RunRecord, error) {
	var out []RunRecord
	for _, t := range r.sortedTenants() {
		ts := r.tenants[t]
		for _, run := range slices.Sorted(maps.Keys(ts.runs)) {
			out = append(out, ts.runs[run].rec.Clone())
		}
	}
	return out, nil
}

func (r *Reference) sortedTenants() []TenantID {
	ts := slices.Collect(maps.Keys(r.tenants))
	slices.SortFunc(ts, func(a, b TenantID) int { return bytes.Compare(a[:], b[:]) })
	return ts
}

// Clone returns an independent copy of the whole state, for explorers that
// branch a world.
func (r *Reference) Clone() *Reference {
	c := &Reference{cfg: r.cfg, selfCheck: r.selfCheck, tenants: make(map[TenantID]*tenantState, len(r.tenants)), total: r.total}
	for t, ts := range r.tenants {
		cts := &tenantState{runs: make(map[RunID]*runState, len(ts.runs)), shardCount: ts.shardCount, lastClaim: maps.Clone(ts.lastClaim)}
		for id, rs := range ts.runs {
			crs := &runState{rec: rs.rec.Clone(), shards: make(map[ShardID]*ShardRecord, len(rs.shards)), order: slices.Clone(rs.order)}
			for sid, rec := range rs.shards {
				cp := rec.Clone()
				crs.shards[sid] = &cp
			}
			cts.runs[id] = crs
		}
		c.tenants[t] = cts
	}
	return c
}
