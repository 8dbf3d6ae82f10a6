package coord

import "testing"

func TestEventCollectorCeilingAndDrain(t *testing.T) {
	c := NewEventCollectorMax(2)
	ev := func(k EventKind) Event { return Event{Tenant: tenantA, Run: run1, Kind: k} }
	if !c.Emit(ev(EventShardAcquired)) || !c.Emit(ev(EventShardCheckpointed)) {
		t.Fatal("events under the ceiling dropped")
	}
	if c.Emit(ev(EventShardCompleted)) || c.Len() != 2 || c.Dropped() != 1 {
		t.Fatalf("past the ceiling: len %d dropped %d", c.Len(), c.Dropped())
	}
	var seen []EventKind
	c.DrainWith(func(e Event) { seen = append(seen, e.Kind) })
	if len(seen) != 2 || seen[0] != EventShardAcquired || !c.Empty() {
		t.Fatalf("drained %v, left %d", seen, c.Len())
	}
	if c.EmitAll([]Event{ev(EventShardParked), ev(EventShardSplit), ev(EventRunFailed)}) != 2 {
		t.Fatal("the ceiling did not hold after a drain")
	}
	if got := c.Drain(); len(got) != 2 || got[1].Kind != EventShardSplit || !c.Empty() {
		t.Fatalf("drain %v", got)
	}
	u := NewEventCollectorCap(4)
	for i := 0; i < 10; i++ {
		if !u.Emit(ev(EventShardLeaseRenewed)) {
			t.Fatal("a collector without a ceiling dropped an event")
		}
	}
}

func TestEventCollectorRefusesASecondTenant(t *testing.T) {
	c := NewEventCollector()
	c.Emit(Event{Tenant: tenantA, Kind: EventRunCreated})
	c.Drain() // draining keeps the tenant: one tenant per lifetime
	defer func() {
		if recover() == nil {
			t.Fatal("an event of another tenant was accepted")
		}
	}()
	c.Emit(Event{Tenant: tenantB, Kind: EventRunCreated})
}
