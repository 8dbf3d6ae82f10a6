package coord

import (
	"fmt"

	"shardsim/simkv"
)

// Etcd is the coordinator over etcd's KV API: every record lives in the KV
// under a deterministic keyspace (etcd_keys.go), encoded with this
// package's codec, and every change is one compare-and-swap transaction.
//
// Each mutation follows one pattern (etcd_cas.go): read the records it
// depends on at one revision; compute the change with the same pure Step*
// function the reference uses; commit it in a transaction that compares
// the mod revisions it read; on a failed compare back off and start over;
// on an ambiguous answer read back whether the transaction landed. Shard
// owners are also recorded in owner-binding keys held by etcd leases
// (etcd_owner.go), checked together with the logical deadline.
//
// An Etcd holds no protocol state of its own, only the KV handle,
// counters and scratch space for its reads, so it is cheap to build: a
// simulated worker makes one per task over that task's KV, and any number
// of them may share one store. One Etcd serves one operation at a time.
//
// It uses nothing but what etcd offers through simkv.KV, so the same code
// could run over a real etcd client.
type Etcd struct {
	kv        simkv.KV
	cfg       EtcdConfig
	keys      keyspace
	selfCheck bool
	stats     EtcdStats
	seq       uint64 // write stamps issued (etcd_readback.go)
	// shard is where loadShard reads a shard into: an operation attempt
	// reads one shard at a time, and a fresh state per read was the
	// backend's largest allocation. It is made by the first read (an
	// Etcd is made per task, and many tasks read no shard).
	shard *shardState
	// shards is where runShards decodes a run's shard records: its
	// callers summarize them before the Etcd reads again.
	shards []ShardRecord
}

// EtcdStats counts what one Etcd did, for tests and reports.
type EtcdStats struct {
	Requests   int // KV requests sent
	Transport  int // requests that failed with a transport error
	Conflicts  int // transactions whose compares failed
	Ambiguous  int // transactions answered with an indeterminate error
	Landed     int // ... of which a read-back showed applied
	Grants     int // etcd leases granted
	KeepAlives int // etcd leases kept alive
	Revokes    int // etcd leases revoked
	// StorageExpired counts lease-gated requests refused because the
	// owner binding's etcd lease had expired (the storage half of the
	// lease failing closed).
	StorageExpired int
	// OwnLateAcquires counts acquires answered with the grant their own
	// earlier attempt wrote, landing after its read-back said it had not.
	OwnLateAcquires int
}

var _ Coordinator = (*Etcd)(nil)

// NewEtcd returns a coordinator over kv. Zero fields of cfg take their
// defaults; a configuration that fails EtcdConfig.Validate panics, so
// validate configurations once where they are made.
func NewEtcd(kv simkv.KV, cfg EtcdConfig) *Etcd {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	return &Etcd{kv: kv, cfg: cfg, keys: newKeyspace(cfg.Namespace), selfCheck: !selfCheckBlinded(cfg.Bugs)}
}

// Config returns the configuration, with defaults applied.
func (e *Etcd) Config() EtcdConfig { return e.cfg }

// Stats returns the counters so far.
func (e *Etcd) Stats() EtcdStats { return e.stats }

func (e *Etcd) env(now LogicalTime, tenant TenantID) StepEnv {
	return StepEnv{Now: now, Tenant: tenant, Bugs: e.cfg.Bugs}
}

// shardEnv is env for an operation on the shard st holds, with the
// status of its run when st read it.
func (e *Etcd) shardEnv(now LogicalTime, tenant TenantID, st *shardState) StepEnv {
	env := e.env(now, tenant)
	if st.run.Set {
		env.Run = Some(st.run.Val.Status)
	}
	return env
}

// transient builds a retryable infrastructure failure.
func transient(label, format string, args ...any) *InfraError {
	return &InfraError{Transient: true, Operation: label, Message: fmt.Sprintf(format, args...)}
}

// corrupt builds a non-retryable infrastructure failure: undecodable or
// inconsistent records, or a request etcd refused as malformed.
func corrupt(label, format string, args ...any) *InfraError {
	return &InfraError{Operation: label, Message: fmt.Sprintf(format, args...)}
}

// surface turns an internal failure into op's error: an *InfraError
// becomes op's backend error, anything else (a protocol error built by a
// Step function) passes through.
func surface(op Operation, err error) error {
	if infra, ok := err.(*InfraError); ok {
		return BackendError(op, infra)
	}
	return err
}

// mustHold panics on a failed self-check unless a bug that produces such
// states is on, like the reference: a state that breaks an invariant is
// never written.
func (e *Etcd) mustHold(what string, err error) {
	if err != nil && e.selfCheck {
		panic(selfCheckFailure("etcd", what, err))
	}
}

// checkShard asserts that next may replace old (nil for a new record).
func (e *Etcd) checkShard(old, next *ShardRecord) {
	if err := shardSelfCheck(old, next); err != nil {
		e.mustHold(next.Shard.String(), err)
	}
}

// checkRun asserts that next may replace old (nil for a new record).
func (e *Etcd) checkRun(old, next *RunRecord) {
	if err := runSelfCheck(old, next); err != nil {
		e.mustHold(next.Run.String(), err)
	}
}
