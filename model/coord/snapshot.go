package coord

import (
	"maps"
	"slices"
)

// Snapshot is a coordinator's durable state at one instant, in the form
// the property checkers (checker/coordcheck) work on. Both
// backends produce one: the reference from memory, the etcd backend by
// decoding every key of its namespace. Everything but Bindings is the
// protocol's state and must agree between backends.
type Snapshot struct {
	// At is the logical time of the observation.
	At LogicalTime
	// Runs are ordered by tenant, then run.
	Runs []RunRecord
	// Shards are ordered by tenant, run, then shard.
	Shards []ShardRecord
	// Claims are the claim-cooldown records, by tenant, then worker.
	Claims []TenantClaim
	// Bindings are the owner bindings of a backend that keeps them apart
	// from the records (the etcd backend), by tenant, run, then shard.
	Bindings []TenantBinding
}

// TenantClaim is one worker's claim record in one tenant.
type TenantClaim struct {
	Tenant TenantID
	Claim  ClaimRecord
}

// TenantBinding is the owner binding of one shard.
type TenantBinding struct {
	Tenant  TenantID
	Shard   ShardKey
	Binding OwnerBinding
}

// tenantShardKey names a shard across tenants.
type tenantShardKey struct {
	Tenant TenantID
	Key    ShardKey
}

type tenantRunKey struct {
	Tenant TenantID
	Run    RunID
}

// Snapshot returns the reference's state at logical time at.
func (r *Reference) Snapshot(at LogicalTime) Snapshot {
	s := Snapshot{At: at}
	s.Shards, _ = r.Shards()
	s.Runs, _ = r.Runs()
	for _, t := range r.sortedTenants() {
		last := r.tenants[t].lastClaim
		for _, w := range slices.Sorted(maps.Keys(last)) {
			s.Claims = append(s.Claims, TenantClaim{Tenant: t, Claim: ClaimRecord{Worker: w, LastClaimAt: last[w]}})
		}
	}
	return s
}
