package scenarios

import (
	"time"

	"shardsim/fate"
	"shardsim/model/keymove"
	"shardsim/nemesis"
	"shardsim/simkv"
)

// kmShape is what distinguishes the key-migration scenarios: their fault
// profile and timing.
type kmShape struct {
	name, description string
	healAt            time.Duration
	convergeWithin    time.Duration
	crashOn, crashMax float64 // executor crashes: chance the kind is on, top rate per tick
	netOn             float64 // request faults on etcd and the shards
	outageOn          float64 // shard outages (transient)
	deadOn            float64 // one shard fails for good
	tornOn            float64 // torn copies
	maxKeys           int
}

// kmOptions is every option of one keymove run, drawn in drawKMOptions.
type kmOptions struct {
	oldShards, change int // change: 0 scale-out, 1 scale-in, 2 rebalance
	keys              int
	missing           float64 // chance a key has no data at the start
	exec              keymove.Options
	startAt           time.Duration
	clients           int
	pace              time.Duration
	writes, hot       float64
	refresh           float64 // chance per op that a client re-reads the whole map first
	metaNet, shardNet fate.Config
	rates             nemesis.Rates // executor crash and pause, meta partition and leader change
	outage, shardLead float64
	dead              bool
	deadIndex         int // which shard (sorted ids, modulo their number)
	deadAt            time.Duration
	torn              float64
	poisoned          int
}

// drawKMOptions draws every option of a run from the swarm, in one fixed
// order (the swarm prints them in that order).
func drawKMOptions(sw *nemesis.Swarm, sh kmShape) kmOptions {
	o := kmOptions{
		oldShards: sw.Int("old_shards", 2, 4),
		change:    sw.Enum("topology_change", 0, 2),
		keys:      sw.Int("keys", 12, sh.maxKeys),
		missing:   sw.Rate("missing_keys", 0.5, 0.02, 0.1),
		startAt:   sw.Duration("executor_start", 0, 300*time.Millisecond),
		clients:   sw.Int("clients", 2, 4),
		pace:      sw.Duration("client_pace", 5*time.Millisecond, 40*time.Millisecond),
		writes:    sw.Rate("client_writes", 1, 0.3, 0.8),
		hot:       sw.Rate("hot_key_share", 0.6, 0.1, 0.6),
		refresh:   sw.Rate("map_refresh", 0.7, 0.02, 0.3),
	}
	o.exec = drawExecOptions(sw)
	o.metaNet = drawNet(sw, "meta_", sh.netOn)
	o.shardNet = drawNet(sw, "shard_", sh.netOn)
	o.rates.Crash = sw.Rate("executor_crash", sh.crashOn, sh.crashMax/10, sh.crashMax)
	o.rates.Pause = sw.Rate("pause", 0.4, 0.01, 0.06)
	o.rates.Partition = sw.Rate("meta_partition", 0.5, 0.01, 0.08)
	o.rates.LeaderChange = sw.Rate("meta_leader_change", 0.4, 0.01, 0.05)
	o.outage = sw.Rate("shard_outage", sh.outageOn, 0.01, 0.1)
	o.shardLead = sw.Rate("shard_leader_change", 0.4, 0.01, 0.05)
	o.dead = sw.Flag("dead_shard", sh.deadOn)
	o.deadAt = sw.Duration("dead_at", 0, sh.healAt)
	o.torn = sw.Rate("torn_copies", sh.tornOn, 0.05, 0.3)
	o.poisoned = sw.Int("poisoned_keys", 0, 2)
	o.deadIndex = sw.Enum("dead_shard_index", 0, 4)
	return o
}

// drawExecOptions draws the executor's options around the seed's defaults,
// scaled to worlds of tens of keys.
func drawExecOptions(sw *nemesis.Swarm) keymove.Options {
	e := keymove.DefaultOptions()
	e.CopyConcurrency = sw.Int("copy_concurrency", 1, 6)
	e.VerifyConcurrency = sw.Int("verify_concurrency", 1, 4)
	e.SwapBatchSize = sw.Int("swap_batch", 1, 6)
	e.MaxRetries = sw.Int("max_retries", 1, 5)
	e.RetryBaseDelay = sw.Duration("retry_base", 2*time.Millisecond, 25*time.Millisecond)
	e.RetryMaxDelay = 8 * e.RetryBaseDelay
	e.InterleaveCopyAndVerify = sw.Flag("interleave", 0.6)
	e.Verification = keymove.VerificationMode(sw.Enum("verification", 0, 2))
	e.ForceSwapOnVerificationFailure = sw.Flag("force_swap", 0.3)
	e.CheckpointEvery = sw.Duration("checkpoint_every", 20*time.Millisecond, 300*time.Millisecond)
	e.ProgressEvery = 100 * time.Millisecond
	e.RaceBudget = sw.Int("race_budget", 3, 12)
	return e
}

// drawNet draws one store kind's request faults.
func drawNet(sw *nemesis.Swarm, prefix string, on float64) fate.Config {
	f := simkv.DefaultFaults()
	f.MinLatency, f.MaxLatency = 500*time.Microsecond, 6*time.Millisecond
	f = nemesis.DrawRequestFaults(sw, prefix, nemesis.RequestFaultRange{On: on, MinLose: 0.005, MaxLose: 0.05, MinDelay: 0.01, MaxDelay: 0.1}, f)
	f.MaxDelay = 400 * time.Millisecond
	f.Timeout = 150 * time.Millisecond
	return f
}

// topologies returns the old and new topology of a run.
func (o kmOptions) topologies() (old, next keymove.Topology) {
	for i := 1; i <= o.oldShards; i++ {
		old.Shards = append(old.Shards, keymove.ShardID(kmShardName(i)))
	}
	switch {
	case o.change == 1 && o.oldShards > 2:
		next.Shards = append(next.Shards, old.Shards[:len(old.Shards)-1]...) // scale-in
	case o.change == 2:
		next.Shards = append(append(next.Shards, old.Shards[1:]...), keymove.ShardID(kmShardName(o.oldShards+1)))
	default:
		next.Shards = append(append(next.Shards, old.Shards...), keymove.ShardID(kmShardName(o.oldShards+1))) // scale-out
	}
	return old, next
}

func kmShardName(i int) string { return "s" + string(rune('0'+i)) }
