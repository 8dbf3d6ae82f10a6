package shrink

import (
	"testing"

	"shardsim/model/bugs"
	"shardsim/scenarios"
)

// The tape reads exactly as the bytes driver: a seeded run's recording,
// replayed through the tape and through Config.Choices, and the canonical
// encoding of the draws the tape noted, all give the seeded run's digest.
func TestTapeReplaysLikeTheBytesDriver(t *testing.T) {
	set, err := bugs.Parse("kv.phantom-ack")
	if err != nil {
		t.Fatal(err)
	}
	seeded := scenarios.Config{Seed: 3, Bugs: set}
	stream, res, err := Recording("kv", seeded)
	if err != nil {
		t.Fatal(err)
	}
	target := Target{Scenario: "kv", Bugs: set, Property: "KV.Linearizable"}
	viaTape, draws, err := target.Replay(stream)
	if err != nil {
		t.Fatal(err)
	}
	viaBytes, err := scenarios.Run("kv", scenarios.Config{Bugs: set, Choices: Encode(draws)})
	if err != nil {
		t.Fatal(err)
	}
	if viaTape.Digest != res.Digest || viaBytes.Digest != res.Digest {
		t.Fatalf("digests: seeded %s, tape %s, canonical bytes %s", res.Digest, viaTape.Digest, viaBytes.Digest)
	}
	if uint64(len(draws)) != res.Draws || !target.keeps(viaTape) {
		t.Fatalf("the tape noted %d draws of %d; keeps=%v", len(draws), res.Draws, target.keeps(viaTape))
	}
}

// A shrunk scenario run is smaller by every measure and still fails with
// the same property. The budget is counted in replays, so the result is
// the same on any machine; 100 replays already take seed 3 from 8 faults
// and 2259 bytes to 1 fault and 698 bytes (1500, the old budget, took
// 10s for no stronger assertion).
func TestShrinkScenarioRun(t *testing.T) {
	set, _ := bugs.Parse("kv.phantom-ack")
	rep, err := Shrink(Target{Scenario: "kv", Bugs: set}, scenarios.Config{Seed: 3}, Options{MaxReplays: 150})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d replays: before %+v after %+v", rep.Result.Replays, rep.Before, rep.After)
	if rep.Final.Property != "KV.Linearizable" || rep.Target.Property != "KV.Linearizable" {
		t.Fatalf("kept %s, final %s", rep.Target.Property, rep.Final.Property)
	}
	if rep.After.Bytes >= rep.Before.Bytes || rep.After.Chosen >= rep.Before.Chosen || rep.After.Events >= rep.Before.Events {
		t.Fatalf("before %+v after %+v", rep.Before, rep.After)
	}
	if rep.After.Faults > rep.Before.Faults || rep.After.Faults == 0 {
		t.Fatalf("faults %d -> %d: a phantom ack needs one lost request", rep.Before.Faults, rep.After.Faults)
	}
}

// BenchmarkShrinkKV shrinks kv phantom-ack seed 3 to its fixpoint and
// reports replays per second and per shrink.
func BenchmarkShrinkKV(b *testing.B) {
	set, _ := bugs.Parse("kv.phantom-ack")
	replays := 0
	for i := 0; i < b.N; i++ {
		rep, err := Shrink(Target{Scenario: "kv", Bugs: set}, scenarios.Config{Seed: 3}, Options{})
		if err != nil || !rep.Result.Fixpoint {
			b.Fatalf("%v (fixpoint %v)", err, rep.Result.Fixpoint)
		}
		replays += rep.Result.Replays
	}
	b.ReportMetric(float64(replays)/b.Elapsed().Seconds(), "replays/s")
	b.ReportMetric(float64(replays)/float64(b.N), "replays/shrink")
}
