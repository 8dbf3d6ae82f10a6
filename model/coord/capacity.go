package coord

// CapacityHint is the advisory backoff signal seed 004 returns with every
// granted or renewed lease. The coordinator never acts on it; a worker
// reads it to decide whether to keep working a shard that keeps being
// retried, and how much it may still split.
type CapacityHint struct {
	// Acquires is how many leases the shard has been granted, this one
	// included (its acquire count).
	Acquires uint32
	// RetryLimit is the run's MaxShardRetries (0: no limit).
	RetryLimit uint32
	// Backoff is set once the shard has been leased more often than its
	// run allows retries: the worker should park it (ParkTooManyErrors)
	// rather than try again.
	Backoff bool
	// SpawnRoom is how many more shards the shard may spawn.
	SpawnRoom int
}

// capacityOf computes the hint for rec (as it stands after the grant or
// renewal) in a run that allows retries retries.
func capacityOf(rec *ShardRecord, retries uint32) CapacityHint {
	return CapacityHint{
		Acquires:   rec.AcquireCount,
		RetryLimit: retries,
		Backoff:    retries > 0 && rec.AcquireCount > retries,
		SpawnRoom:  max(0, maxSpawnedPerShard-len(rec.Spawned)),
	}
}
