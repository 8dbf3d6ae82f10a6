package coordcheck

import (
	"fmt"
	"sort"
	"time"

	"shardsim/model/coord"
	"shardsim/property"
	"shardsim/simclock"
)

// Liveness judges the two liveness properties after the heal phase,
// from the durable states Durable observes:
//
//   - C.EventuallyLeased: after HealAt, an Active shard without a live
//     lease is leased within LeaseWithin of time during which some worker
//     was available (told by Available: a task with no shard in hand);
//   - C.Convergence: within ConvergeWithin of HealAt, every shard is
//     terminal and every run is terminal.
//
// A shard of a run that ended (an admin cancelled, failed or completed it
// with shards in flight) is settled by its run's end: the run no longer
// hands it out, so it is neither owed a lease nor a terminal state.
//
// A lease counts as live until its logical deadline on true time (virtual
// time in logical units); LeaseWithin must cover the largest clock skew a
// worker may keep after healing, since workers judge expiry on their own
// clocks.
type Liveness struct {
	HealAt         simclock.Time
	LeaseWithin    time.Duration
	ConvergeWithin time.Duration
	Unit           time.Duration // virtual time of one logical unit

	shards    map[ShardRef]*shardLive
	order     []ShardRef // first-seen order, for deterministic reports
	last      *coord.Snapshot
	converged simclock.Time // first time everything was terminal, or -1
	err       *property.Violation

	idle  map[string]bool // worker tasks by name: true while without a shard
	nIdle int
	avail []availMark // how much time some worker was available, as a step function
}

// availMark says that by time at, some worker had been available for total.
type availMark struct {
	at    simclock.Time
	total time.Duration
	on    bool // whether some worker is available from at on
}

// shardLive is what liveness tracks of one shard.
type shardLive struct {
	active   bool
	leased   bool
	deadline coord.LogicalTime
	since    simclock.Time // when it last became Active and unleased
}

// NewLiveness returns a liveness judge for a run healed at healAt.
func NewLiveness(healAt simclock.Time, leaseWithin, convergeWithin, unit time.Duration) *Liveness {
	return &Liveness{HealAt: healAt, LeaseWithin: leaseWithin, ConvergeWithin: convergeWithin, Unit: unit,
		shards: map[ShardRef]*shardLive{}, converged: -1, idle: map[string]bool{}}
}

// Available records that worker task name has no shard in hand (idle) or
// has one, as of virtual time at. Times must not decrease.
func (c *Liveness) Available(name string, idle bool, at simclock.Time) {
	if c.idle[name] == idle {
		return
	}
	c.idle[name] = idle
	if idle {
		c.nIdle++
	} else {
		c.nIdle--
	}
	total := c.availableFor(at)
	if n := len(c.avail); n > 0 && c.avail[n-1].at == at {
		c.avail = c.avail[:n-1]
	}
	c.avail = append(c.avail, availMark{at: at, total: total, on: c.nIdle > 0})
}

// availableFor returns how long some worker had been available by at.
func (c *Liveness) availableFor(at simclock.Time) time.Duration {
	i := sort.Search(len(c.avail), func(i int) bool { return c.avail[i].at > at }) - 1
	if i < 0 {
		return 0
	}
	m := c.avail[i]
	if !m.on {
		return m.total
	}
	return m.total + at.Sub(m.at)
}

// Err returns the first violation, or nil.
func (c *Liveness) Err() *property.Violation { return c.err }

func (c *Liveness) fail(prop property.Name, format string, args ...any) {
	if c.err == nil {
		c.err = &property.Violation{Property: prop, Detail: fmt.Sprintf(format, args...)}
	}
}

// expiry returns the virtual time at which a logical deadline passes.
func (c *Liveness) expiry(d coord.LogicalTime) simclock.Time {
	return simclock.Time(int64(d) * int64(c.Unit))
}

// availableSince returns since when s has been available (Active, no live
// lease) as of at, and whether it is.
func (c *Liveness) availableSince(s *shardLive, at simclock.Time) (simclock.Time, bool) {
	switch {
	case !s.active:
		return 0, false
	case !s.leased:
		return s.since, true
	case c.expiry(s.deadline) <= at:
		return c.expiry(s.deadline), true
	}
	return 0, false
}

// waited checks how long s has been available as of at.
func (c *Liveness) waited(k ShardRef, s *shardLive, at simclock.Time) {
	since, ok := c.availableSince(s, at)
	if !ok {
		return
	}
	since = max(since, c.HealAt)
	if waited := c.availableFor(at) - c.availableFor(since); waited > c.LeaseWithin {
		c.fail(property.CEventuallyLeased, "%s/%s was Active and unleased from %v until at least %v, while workers were available for %v, longer than %v (after heal)",
			k.Key.Run, k.Key.Shard, since, at, waited, c.LeaseWithin)
	}
}

// Observe takes a new durable state at virtual time at; register it with
// Durable.OnChange.
func (c *Liveness) Observe(_, next *coord.Snapshot, at simclock.Time, _ uint64) {
	c.last = next
	ended := endedRuns(next)
	for i := range next.Shards {
		r := &next.Shards[i]
		k := ShardRef{r.Tenant, r.Key()}
		s, ok := c.shards[k]
		if !ok {
			s = &shardLive{since: at}
			c.shards[k] = s
			c.order = append(c.order, k)
		}
		leased := r.Lease.Set
		if leased && (!s.leased || r.Lease.Val.Deadline != s.deadline) {
			// A (new or renewed) lease: judge the wait that it ends.
			c.waited(k, s, at)
		}
		if r.Status == coord.ShardActive && !leased && (s.leased || !s.active) {
			s.since = at // became available now (released, unparked, created)
			if s.leased && c.expiry(s.deadline) < at {
				s.since = c.expiry(s.deadline)
			}
		}
		s.active, s.leased = r.Status == coord.ShardActive && !ended[runRef{r.Tenant, r.Run}], leased
		if leased {
			s.deadline = r.Lease.Val.Deadline
		}
	}
	settled := allTerminal(next, ended)
	if c.converged < 0 && settled {
		c.converged = at
	}
	if c.converged >= 0 && !settled {
		c.converged = -1 // something came back (an unpark)
	}
}

// endedRuns returns the runs of s that have ended.
func endedRuns(s *coord.Snapshot) map[runRef]bool {
	out := map[runRef]bool{}
	for i := range s.Runs {
		if runTerminal(s.Runs[i].Status) {
			out[runRef{s.Runs[i].Tenant, s.Runs[i].Run}] = true
		}
	}
	return out
}

// allTerminal reports whether every run of s is terminal and every shard
// is terminal or belongs to a run that ended (ended: endedRuns(s)).
func allTerminal(s *coord.Snapshot, ended map[runRef]bool) bool {
	if len(ended) != len(s.Runs) {
		return false
	}
	for i := range s.Shards {
		if r := &s.Shards[i]; !shardTerminal(r.Status) && !ended[runRef{r.Tenant, r.Run}] {
			return false
		}
	}
	return len(s.Runs) > 0
}

// Finish judges the run as it ended at virtual time end.
func (c *Liveness) Finish(end simclock.Time) {
	if c.err != nil {
		return
	}
	if end < c.HealAt {
		return // the run stopped before healing (a safety violation ended it)
	}
	for _, k := range c.order {
		c.waited(k, c.shards[k], end)
	}
	if c.err != nil {
		return
	}
	deadline := c.HealAt.Add(c.ConvergeWithin)
	switch {
	case c.converged < 0:
		shards, runs := 0, 0
		if c.last != nil {
			ended := endedRuns(c.last)
			for i := range c.last.Shards {
				if r := &c.last.Shards[i]; !shardTerminal(r.Status) && !ended[runRef{r.Tenant, r.Run}] {
					shards++
				}
			}
			for i := range c.last.Runs {
				if !runTerminal(c.last.Runs[i].Status) {
					runs++
				}
			}
		}
		c.fail(property.CConvergence, "%d shards and %d runs still not terminal at %v (healed at %v, bound %v)", shards, runs, end, c.HealAt, c.ConvergeWithin)
	case c.converged > deadline:
		// Everything settled, but too late.
		c.fail(property.CConvergence, "converged at %v, later than %v after the heal at %v", c.converged, c.ConvergeWithin, c.HealAt)
	}
}
