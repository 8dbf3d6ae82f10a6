package nemesis

import (
	"testing"
	"time"

	"shardsim/fate"
	"shardsim/simclock"
)

// The drawn rates land in base under the prefixed option names, which -opt
// overrides; what the world set in base (latencies, deadline) stays.
func TestDrawRequestFaultsNamesAndKeeps(t *testing.T) {
	base := fate.Config{MinLatency: time.Millisecond, MaxLatency: 2 * time.Millisecond, Timeout: time.Second}
	sw := NewSwarm(simclock.NewSeeded(1), map[string]string{"net_lose_request": "0.25", "net_delay": "0"})
	f := DrawRequestFaults(sw, "net_", RequestFaultRange{On: 1, MinLose: 0.01, MaxLose: 0.02, MinDelay: 0.1, MaxDelay: 0.2}, base)
	if err := sw.Err(); err != nil || len(sw.Unused()) != 0 {
		t.Fatalf("overrides: %v, unused %v", err, sw.Unused())
	}
	if f.LoseRequest != 0.25 || f.Delay != 0 || f.LoseResponse < 0.01 || f.LoseResponse > 0.02 {
		t.Fatalf("rates %+v", f)
	}
	if f.MinLatency != base.MinLatency || f.MaxLatency != base.MaxLatency || f.Timeout != base.Timeout {
		t.Fatalf("base changed: %+v", f)
	}
}
