package coord

import "fmt"

// Capacity limits of the protocol.
const (
	// MaxSplitChildren bounds the children of one split_replace.
	MaxSplitChildren = 256
	// maxSpawnedPerShard bounds a shard's spawned list (children plus
	// residuals, over its whole life).
	maxSpawnedPerShard = 1024
	// shardOpLogCap is the number of op-log entries a shard keeps.
	shardOpLogCap = 16
	// runOpLogCap is the number of op-log entries a run keeps.
	runOpLogCap = 8
)

// One split_replace must fit in a fresh shard's spawned list; this array
// has negative length (a compile error) if the constants ever disagree.
var _ [maxSpawnedPerShard - MaxSplitChildren]struct{}

// Defaults for Config.
const (
	defaultMaxShardsPerTenant = 100_000   // Config.Limits.MaxPerTenant
	defaultMaxTotalShards     = 1_000_000 // Config.Limits.MaxTotal
)

// ShardLimits are the ceilings on how many shard records may exist, per
// tenant and in total; they stop a split flood from exhausting the store.
type ShardLimits struct {
	MaxPerTenant int
	MaxTotal     int
}

// LimitScope says which ceiling a request would have crossed.
type LimitScope uint8

const (
	// LimitTenant is the per-tenant ceiling.
	LimitTenant LimitScope = iota
	// LimitGlobal is the ceiling over all tenants.
	LimitGlobal
)

// ShardLimitViolation describes a refused growth. It deliberately carries
// no current counts: the global count would reveal other tenants' sizes.
type ShardLimitViolation struct {
	Scope     LimitScope
	Max       int
	Requested int
}

// String describes the violation.
func (v ShardLimitViolation) String() string {
	scope := "per-tenant"
	if v.Scope == LimitGlobal {
		scope = "global"
	}
	return fmt.Sprintf("%s shard limit %d would be exceeded by %d new shards", scope, v.Max, v.Requested)
}

// checkShardLimits reports whether adding shards to a tenant that holds
// tenantCount shards, in a store that holds totalCount, stays within l.
// Backends count their own records and share this decision.
func checkShardLimits(l ShardLimits, tenantCount, totalCount, adding int) (ShardLimitViolation, bool) {
	if tenantCount+adding > l.MaxPerTenant {
		return ShardLimitViolation{Scope: LimitTenant, Max: l.MaxPerTenant, Requested: adding}, false
	}
	if totalCount+adding > l.MaxTotal {
		return ShardLimitViolation{Scope: LimitGlobal, Max: l.MaxTotal, Requested: adding}, false
	}
	return ShardLimitViolation{}, true
}
