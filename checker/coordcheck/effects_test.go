package coordcheck

import (
	"testing"

	"shardsim/model/coord"
	"shardsim/property"
)

var shard1 = coord.ShardKey{Run: 1, Shard: 1}

func effect(fence coord.FenceEpoch, op coord.OpID, invoked, learned uint64) Effect {
	return Effect{Tenant: tenA, Key: shard1, Actor: "w", Fence: fence, Kind: ReqCheckpoint, Op: op, InvokedSeq: invoked, LearnedSeq: learned}
}

func TestCoordEffectsAcceptAnOrderlyLog(t *testing.T) {
	l := NewEffectLog()
	l.Publish(effect(2, 1, 1, 2))
	l.Publish(effect(2, 2, 3, 4))
	// Overlapping with the last fence-2 effect: not ordered, so no alarm.
	l.Publish(effect(3, 3, 5, 9))
	l.Publish(effect(2, 4, 6, 8))
	l.Publish(effect(3, 5, 10, 11))
	if v := l.Err(); v != nil {
		t.Fatalf("orderly log flagged: %v", v)
	}
	if len(l.Effects()) != 5 {
		t.Fatalf("log holds %d effects", len(l.Effects()))
	}
}

func TestCoordEffectsCatchDoubleEffect(t *testing.T) {
	l := NewEffectLog()
	l.Publish(effect(2, 7, 1, 2))
	l.Publish(effect(2, 7, 3, 4))
	wantViolation(t, l.Err(), property.CIdempotency)
}

func TestCoordEffectsCatchInterleavedEpochs(t *testing.T) {
	l := NewEffectLog()
	l.Publish(effect(3, 1, 1, 2))
	l.Publish(effect(2, 2, 3, 4)) // started after fence 3's work was known
	wantViolation(t, l.Err(), property.CMutualExclusion)
}

func TestCoordEffectsCatchZombieWork(t *testing.T) {
	l := NewEffectLog()
	prev := &coord.Snapshot{Shards: []coord.ShardRecord{{Tenant: tenA, Run: 1, Shard: 1, Fence: 2}}}
	next := &coord.Snapshot{Shards: []coord.ShardRecord{{Tenant: tenA, Run: 1, Shard: 1, Fence: 3}}}
	l.ObserveDurable(prev, next, 0, 5)
	l.Publish(effect(2, 1, 4, 7)) // started before the fence rose: fine
	if v := l.Err(); v != nil {
		t.Fatalf("work begun before the fence rose flagged: %v", v)
	}
	l.Publish(effect(2, 2, 6, 8))
	wantViolation(t, l.Err(), property.CZombieRejection)
}
