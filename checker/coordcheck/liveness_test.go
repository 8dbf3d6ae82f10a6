package coordcheck

import (
	"testing"
	"time"

	"shardsim/model/coord"
	"shardsim/property"
	"shardsim/simclock"
)

const unit = 100 * time.Millisecond

func sec(s float64) simclock.Time { return simclock.Time(s * float64(time.Second)) }

func liveState(status coord.ShardStatus, lease *coord.LeaseHolder, run coord.RunStatus) *coord.Snapshot {
	s := coord.ShardRecord{Tenant: tenA, Run: 1, Shard: 1, Status: status, Fence: 1}
	if lease != nil {
		s.Lease = coord.Some(*lease)
	}
	return &coord.Snapshot{Runs: []coord.RunRecord{{Tenant: tenA, Run: 1, Status: run}}, Shards: []coord.ShardRecord{s}}
}

// newLive returns a judge with one worker task that is always available.
func newLive() *Liveness {
	c := NewLiveness(sec(10), 3*time.Second, 20*time.Second, unit)
	c.Available("w0.0", true, 0)
	return c
}

func TestCoordLivenessPassesAConvergingRun(t *testing.T) {
	c := newLive()
	c.Observe(nil, liveState(coord.ShardActive, nil, coord.RunActive), sec(1), 1)
	c.Observe(nil, liveState(coord.ShardActive, &coord.LeaseHolder{Owner: 1, Deadline: 120}, coord.RunActive), sec(11), 2)
	c.Observe(nil, liveState(coord.ShardDone, nil, coord.RunActive), sec(12), 3)
	c.Observe(nil, liveState(coord.ShardDone, nil, coord.RunDone), sec(13), 4)
	c.Finish(sec(15))
	if v := c.Err(); v != nil {
		t.Fatalf("converging run flagged: %v", v)
	}
}

func TestCoordLivenessCatchesAShardNobodyLeases(t *testing.T) {
	c := newLive()
	c.Observe(nil, liveState(coord.ShardActive, nil, coord.RunActive), sec(1), 1)
	c.Observe(nil, liveState(coord.ShardActive, &coord.LeaseHolder{Owner: 1, Deadline: 200}, coord.RunActive), sec(14), 2)
	wantViolation(t, c.Err(), property.CEventuallyLeased)
}

// An expired lease makes the shard available from its deadline on.
func TestCoordLivenessCountsFromLeaseExpiry(t *testing.T) {
	c := newLive()
	c.Observe(nil, liveState(coord.ShardActive, &coord.LeaseHolder{Owner: 1, Deadline: 110}, coord.RunActive), sec(5), 1)
	c.Observe(nil, liveState(coord.ShardActive, &coord.LeaseHolder{Owner: 2, Deadline: 150}, coord.RunActive), sec(13.5), 2)
	if v := c.Err(); v != nil {
		t.Fatalf("re-leased 2.5s after expiry flagged: %v", v)
	}
	c.Finish(sec(25)) // expired at 15s, never leased again: 10s > 3s
	wantViolation(t, c.Err(), property.CEventuallyLeased)
}

func TestCoordLivenessCatchesNonConvergence(t *testing.T) {
	c := newLive()
	c.Observe(nil, liveState(coord.ShardParked, nil, coord.RunActive), sec(1), 1)
	c.Finish(sec(32))
	wantViolation(t, c.Err(), property.CConvergence)
}

func TestCoordLivenessCatchesLateConvergence(t *testing.T) {
	c := newLive()
	c.Observe(nil, liveState(coord.ShardParked, nil, coord.RunActive), sec(1), 1)
	c.Observe(nil, liveState(coord.ShardParked, nil, coord.RunFailed), sec(31), 2)
	c.Finish(sec(32))
	wantViolation(t, c.Err(), property.CConvergence)
}

// Time during which every worker was busy does not count against a shard.
func TestCoordLivenessOnlyCountsAvailableWorkers(t *testing.T) {
	c := NewLiveness(sec(10), 3*time.Second, 20*time.Second, unit)
	c.Available("w0.0", true, 0)
	c.Observe(nil, liveState(coord.ShardActive, nil, coord.RunActive), sec(1), 1)
	c.Available("w0.0", false, sec(10.5)) // busy with another shard
	c.Available("w0.0", true, sec(20))
	c.Observe(nil, liveState(coord.ShardActive, &coord.LeaseHolder{Owner: 1, Deadline: 250}, coord.RunActive), sec(21), 2)
	if v := c.Err(); v != nil {
		t.Fatalf("waiting while every worker was busy flagged: %v", v)
	}
	c.Observe(nil, liveState(coord.ShardActive, nil, coord.RunActive), sec(21), 3)
	c.Finish(sec(25))
	wantViolation(t, c.Err(), property.CEventuallyLeased)
}
