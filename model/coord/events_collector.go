package coord

import "fmt"

// EventCollector gathers the events of coordination operations for one
// tenant, as seed 004's collector does: events are inert data the caller
// drains and acts on; the coordinator never does. A collector may have a
// hard capacity (NewEventCollectorMax): events past it are dropped and
// Emit reports false, so a burst cannot grow it without bound. It holds
// the events of one tenant for its whole life: mixing tenants in one
// collector would route one tenant's events to another's consumers, and
// is a programming error that panics.
type EventCollector struct {
	events  []Event
	max     int // 0: no ceiling
	tenant  TenantID
	bound   bool // tenant is set
	dropped int
}

// NewEventCollector returns an empty collector without a ceiling.
func NewEventCollector() *EventCollector { return &EventCollector{} }

// NewEventCollectorCap returns an empty collector with room for n events
// allocated up front, without a ceiling.
func NewEventCollectorCap(n int) *EventCollector {
	return &EventCollector{events: make([]Event, 0, max(n, 0))}
}

// NewEventCollectorMax returns a collector that holds at most n events
// (n >= 1) and drops the rest.
func NewEventCollectorMax(n int) *EventCollector {
	if n < 1 {
		panic(fmt.Sprintf("coord: event collector ceiling %d below 1", n))
	}
	return &EventCollector{events: make([]Event, 0, n), max: n}
}

// Emit adds e and reports whether it was kept (false: at capacity). An
// event of another tenant than the collector's first panics.
func (c *EventCollector) Emit(e Event) bool {
	if c.bound && e.Tenant != c.tenant {
		panic(fmt.Sprintf("coord: event collector of tenant %.8s… given an event of tenant %.8s…", c.tenant, e.Tenant))
	}
	c.tenant, c.bound = e.Tenant, true
	if c.max > 0 && len(c.events) >= c.max {
		c.dropped++
		return false
	}
	c.events = append(c.events, e)
	return true
}

// EmitAll adds events in order and returns how many were kept.
func (c *EventCollector) EmitAll(events []Event) int {
	kept := 0
	for _, e := range events {
		if c.Emit(e) {
			kept++
		}
	}
	return kept
}

// Drain returns the events held, oldest first, and empties the collector
// (its tenant and ceiling stay).
func (c *EventCollector) Drain() []Event {
	out := c.events
	c.events = nil
	if c.max > 0 {
		c.events = make([]Event, 0, c.max)
	}
	return out
}

// DrainWith calls f on each event held, oldest first, and empties the
// collector, keeping its storage for reuse.
func (c *EventCollector) DrainWith(f func(Event)) {
	for _, e := range c.events {
		f(e)
	}
	clear(c.events)
	c.events = c.events[:0]
}

// Len returns the number of events held.
func (c *EventCollector) Len() int { return len(c.events) }

// Empty reports whether no event is held.
func (c *EventCollector) Empty() bool { return len(c.events) == 0 }

// Events returns the events held, oldest first, without draining them.
func (c *EventCollector) Events() []Event { return c.events }

// Dropped returns how many events the ceiling turned away.
func (c *EventCollector) Dropped() int { return c.dropped }
