package coord

import (
	"slices"
	"testing"
)

func TestEveryEventKindIsEmitted(t *testing.T) {
	forBackends(t, func(t *testing.T, b backend) {
		c := b.make(t, DefaultConfig())
		var evs []Event
		add := func(_ any, e []Event, err error) {
			t.Helper()
			wantCode(t, err, codeNone)
			evs = append(evs, e...)
		}
		e, err := c.CreateRun(1, tenantA, run1, RunConfig{})
		add(nil, e, err)
		add(c.RegisterShards(1, tenantA, run1, []InitialShard{{1, spec("a", "m")}, {2, spec("m", "")}}, 1))
		res, e, err := c.AcquireAndRestore(1, tenantA, ShardKey{run1, 1}, w1)
		add(nil, e, err)
		l := res.Lease
		add(c.Renew(2, tenantA, l))
		add(c.Checkpoint(2, tenantA, l, cur("b"), 2))
		add(c.SplitResidual(2, tenantA, l, SplitResidualPlan{spec("a", "g"), spec("g", "m")}, 3))
		add(c.SplitReplace(2, tenantA, l, SplitReplacePlan{[]ShardSpec{spec("a", "c"), spec("c", "g")}}, 4))
		res, e, err = c.AcquireAndRestore(2, tenantA, ShardKey{run1, 2}, w1)
		add(nil, e, err)
		add(c.ParkShard(2, tenantA, res.Lease, ParkOther, 5))
		add(c.UnparkShard(2, tenantA, ShardKey{run1, 2}, 6))
		res, e, err = c.AcquireAndRestore(2, tenantA, ShardKey{run1, 2}, w1)
		add(nil, e, err)
		add(c.Complete(2, tenantA, res.Lease, Cursor{}, 7))
		add(c.CompleteRun(3, tenantA, run1, 8))
		for i, f := range []func(RunID) (Outcome, []Event, error){
			func(r RunID) (Outcome, []Event, error) { return c.FailRun(3, tenantA, r, 9) },
			func(r RunID) (Outcome, []Event, error) { return c.CancelRun(3, tenantA, r, 9) },
		} {
			r := RunID(10 + i)
			add(createRunWithShards(c, 3, tenantA, r, RunConfig{}, []InitialShard{{1, spec("", "")}}, 1))
			add(f(r))
		}
		var kinds []EventKind
		for _, e := range evs {
			if !slices.Contains(kinds, e.Kind) {
				kinds = append(kinds, e.Kind)
			}
			if e.Tenant != tenantA || e.At == 0 {
				t.Fatalf("bad envelope %+v", e)
			}
		}
		slices.Sort(kinds)
		if !slices.Equal(kinds, allEventKinds()) {
			t.Fatalf("emitted kinds %v, want all %v", kinds, allEventKinds())
		}
	})
}

func TestEventKindClasses(t *testing.T) {
	terminal := 0
	for _, k := range allEventKinds() {
		if k.IsShardEvent() == k.IsRunEvent() {
			t.Errorf("%s is not exactly one of shard/run", k)
		}
		if k.IsTerminal() {
			terminal++
		}
	}
	if terminal != 6 {
		t.Errorf("%d terminal kinds, want 6", terminal)
	}
}
