package coord

import (
	"flag"
	"testing"

	"pgregory.net/rapid"
	"shardsim/simclock"
	"shardsim/simkv"
)

// withRapidSteps runs f with rapid's average state-machine length set to
// n, unless the command line chose one.
func withRapidSteps(t *testing.T, n string, f func()) {
	fl := flag.Lookup("rapid.steps")
	old := fl.Value.String()
	if old == fl.DefValue {
		if err := flag.Set("rapid.steps", n); err != nil {
			t.Fatal(err)
		}
		defer flag.Set("rapid.steps", old)
	}
	f()
}

// oracleConfig draws the protocol configuration of one check: small shard
// limits (so limit errors happen) and a cooldown.
func oracleConfig(t *rapid.T, cfg Config) Config {
	cfg.ClaimCooldown = LogicalDuration(rapid.IntRange(0, 3).Draw(t, "cooldown"))
	if rapid.Bool().Draw(t, "tight limits") {
		cfg.Limits = ShardLimits{MaxPerTenant: rapid.IntRange(4, 12).Draw(t, "max per tenant"), MaxTotal: rapid.IntRange(6, 20).Draw(t, "max total")}
	}
	return cfg
}

// runOracle is one rapid check of the differential state machine.
func runOracle(t *rapid.T, cfg Config, withFaults bool, stats *oracleStats) {
	runOracleOn(t, cfg, withFaults, stats, nil)
}

// runOracleOn is runOracle over a real etcd (nil: the simulated store).
// A real etcd's leader cannot be moved from here, so over one the fault
// mix draws no leader changes.
func runOracleOn(t *rapid.T, cfg Config, withFaults bool, stats *oracleStats, real *realEtcd) {
	cfg = oracleConfig(t, cfg)
	ecfg := testEtcdConfig(cfg)
	opts := pairOptions{real: real}
	if withFaults {
		// Swarm testing: each check draws its own fault mix and retry
		// budget; a short budget lets transient failures reach the oracle.
		rate := func(label string) float64 { return rapid.SampledFrom([]float64{0, 0.05, 0.15, 0.3}).Draw(t, label) }
		opts.faults = &simkv.DirectFaults{LoseRequest: rate("lose request"), LoseResponse: rate("lose response"), Refuse: rate("refuse")}
		if real == nil {
			opts.faults.LeaderChange = rate("leader change")
		}
		ecfg.MaxAttempts = rapid.IntRange(2, 8).Draw(t, "attempts")
		// A seeded stream: rapid's byte slices lean to zeros, which
		// would draw almost no faults.
		opts.choices = simclock.NewSeeded(rapid.Uint64().Draw(t, "fault seed"))
	}
	p, err := newPair(cfg, ecfg, opts, stats)
	if err != nil {
		t.Fatal(err)
	}
	defer p.finish()
	m := &machine{p: p}
	m.bootstrap(t)
	t.Repeat(m.actions(!withFaults))
}

// TestDifferentialOracle: the etcd backend over a fault-free KV agrees
// with the reference on every result, event and durable state, and its
// state passes the property checkers after every step.
func TestDifferentialOracle(t *testing.T) {
	stats := newOracleStats()
	withRapidSteps(t, "100", func() {
		rapid.Check(t, func(rt *rapid.T) { runOracle(rt, DefaultConfig(), false, stats) })
	})
	t.Log("\n" + stats.report())
}

// TestDifferentialOracleFaults: the same with request faults on. The etcd
// backend may add transient failures, nothing else; the oracle settles
// each by the durable state and by retrying with the same op id.
func TestDifferentialOracleFaults(t *testing.T) {
	stats := newOracleStats()
	withRapidSteps(t, "100", func() {
		rapid.Check(t, func(rt *rapid.T) { runOracle(rt, DefaultConfig(), true, stats) })
	})
	t.Log("\n" + stats.report())
}

// FuzzDifferentialOracle is the faulty oracle under coverage-guided
// fuzzing: the fuzzer's bytes are rapid's choices.
func FuzzDifferentialOracle(f *testing.F) {
	stats := newOracleStats()
	f.Fuzz(rapid.MakeFuzz(func(t *rapid.T) { runOracle(t, DefaultConfig(), true, stats) }))
}
