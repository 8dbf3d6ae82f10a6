package nemesis

import (
	"time"

	"shardsim/fate"
	"shardsim/simclock"
	"shardsim/simkv"
)

// Target is an actor the nemesis may hurt.
type Target struct {
	ID simclock.ActorID
	// Fresh returns a new actor value for a restart: whatever the old one
	// held in memory is lost. Nil means the target is never crashed.
	Fresh func() simclock.Actor
	// Down and Up, when set, tell the world that the target went down
	// (crashed or paused) and came back, for worlds that track it (a raft
	// group's membership).
	Down func(crashed bool)
	Up   func()
}

// Fault is one kind of fault a world's nemesis may inject. Every tick,
// Chaos runs its faults in order; each draws whether and where to strike
// from the nemesis's choices and strikes through Chaos's mechanism, which
// remembers what to undo at the heal. The order of faults and of each
// fault's draws is part of a run's identity: changing it changes what old
// seeds do.
type Fault interface {
	Strike(k *Chaos, ctx *simclock.Context)
}

// Chaos is the one nemesis of every world: a tick that runs the world's
// faults until HealAt, and the mechanism they share (crash and restart,
// pause and resume, partition and heal, clock jumps and drift, leader
// changes). At HealAt every fault ends for good: crashed targets restart,
// paused ones resume, partitions heal, clock drift stops, every KV server
// turns Quiet, and OnHeal runs (for networks of the world's own kind).
type Chaos struct {
	Targets []Target
	Faults  []Fault
	Tick    time.Duration // how often the nemesis decides
	HealAt  simclock.Time
	Servers []*simkv.Server // KV servers whose partitions heal and which turn Quiet
	Quiet   fate.Config     // the KV servers' request faults after the heal
	OnHeal  func(ctx *simclock.Context)

	crashed []simclock.ActorID // in crash order
	paused  []simclock.ActorID // in pause order
	healed  bool
	stats   Stats
}

// Stats counts the faults a nemesis injected.
type Stats struct {
	Crashes, Pauses, ClockFaults, Partitions, LeaderChanges, GroupLeaderMoves, MemberChanges int
	Storms                                                                                   int // lease storms (every target paused past a lease)
}

// Stats returns what the nemesis did.
func (k *Chaos) Stats() Stats { return k.stats }

type chaosTick struct{}

// endKind says which fault an end event undoes.
type endKind uint8

const (
	endRestart   endKind = iota // a crashed target restarts
	endResume                   // a paused target resumes
	endPartition                // a partition heals
)

type chaosEnd struct {
	kind   endKind
	id     simclock.ActorID
	server *simkv.Server // endPartition
}

// Receive implements simclock.Actor.
func (k *Chaos) Receive(ctx *simclock.Context, msg any) {
	switch m := msg.(type) {
	case simclock.Started:
		// Starting only sets the nemesis's own timers: private.
		ctx.Private()
		if len(k.Faults) > 0 {
			ctx.After(k.Tick, chaosTick{})
		}
		ctx.Defer(k.HealAt.Sub(ctx.Now()), k.heal)
	case chaosTick:
		// A tick that strikes nothing changes nothing but the nemesis: it
		// stays private for a model checker (a strike makes it shared).
		ctx.Private()
		if ctx.Now() >= k.HealAt || k.healed {
			return
		}
		for _, f := range k.Faults {
			f.Strike(k, ctx)
		}
		ctx.After(k.Tick, chaosTick{})
	case chaosEnd:
		if !k.healed {
			k.end(ctx, m)
		}
	}
}

// Pick draws one target satisfying ok, in target order.
func (k *Chaos) Pick(ctx *simclock.Context, ok func(Target) bool) (Target, bool) {
	var cands []Target
	for _, t := range k.Targets {
		if ok(t) {
			cands = append(cands, t)
		}
	}
	if len(cands) == 0 {
		return Target{}, false
	}
	return simclock.Pick(ctx.Choices(), cands), true
}

// Window draws how long a fault lasts: between a tick and max.
func (k *Chaos) Window(ctx *simclock.Context, max time.Duration) time.Duration {
	return ctx.Choices().Duration(k.Tick, max)
}

// Crash crashes t now; it restarts with a fresh actor after a window of at
// most max (or at the heal).
func (k *Chaos) Crash(ctx *simclock.Context, t Target, max time.Duration) {
	ctx.Loop().Shared()
	ctx.Loop().Crash(t.ID)
	k.crashed = append(k.crashed, t.ID)
	k.stats.Crashes++
	if t.Down != nil {
		t.Down(true)
	}
	ctx.After(k.Window(ctx, max), chaosEnd{kind: endRestart, id: t.ID})
}

// Pause pauses t now; it resumes, a zombie of its old beliefs, after d.
func (k *Chaos) Pause(ctx *simclock.Context, t Target, d time.Duration) {
	ctx.Loop().Shared()
	ctx.Loop().Pause(t.ID)
	k.paused = append(k.paused, t.ID)
	k.stats.Pauses++
	if t.Down != nil {
		t.Down(false)
	}
	ctx.After(d, chaosEnd{kind: endResume, id: t.ID})
}

// Partition cuts actor id off server for a window of at most max.
func (k *Chaos) Partition(ctx *simclock.Context, server *simkv.Server, id simclock.ActorID, max time.Duration) {
	ctx.Loop().Shared()
	server.Partition(id)
	k.stats.Partitions++
	ctx.After(k.Window(ctx, max), chaosEnd{kind: endPartition, id: id, server: server})
}

// Skew jumps t's clock (by up to the clock's own bound either way) or sets
// its drift, with even odds. A target without a clock is left alone.
func (k *Chaos) Skew(ctx *simclock.Context, t Target) {
	ctx.Loop().Shared()
	loop, c := ctx.Loop(), ctx.Choices()
	clock := loop.Clock(t.ID)
	if clock == nil {
		return
	}
	k.stats.ClockFaults++
	if c.Chance(0.5) {
		d := c.Duration(-clock.MaxSkew(), clock.MaxSkew())
		clock.Jump(ctx.Now(), d)
		ctx.Rec("nemesis.clock-jump").Str("target", loop.Name(t.ID)).Dur("by", d).End()
		return
	}
	ppm := c.Between(-200_000, 200_000)
	clock.SetDrift(ctx.Now(), ppm)
	ctx.Rec("nemesis.clock-drift").Str("target", loop.Name(t.ID)).Int("ppm", ppm).End()
}

// LeaderChange forces server's leader to change, with in-flight requests
// resolved over a window of at most max.
func (k *Chaos) LeaderChange(ctx *simclock.Context, server *simkv.Server, max time.Duration) {
	ctx.Loop().Shared()
	k.stats.LeaderChanges++
	server.LeaderChange(ctx.Choices().Duration(time.Millisecond, max))
}

func (k *Chaos) end(ctx *simclock.Context, m chaosEnd) {
	loop := ctx.Loop()
	switch m.kind {
	case endRestart:
		if remove(&k.crashed, m.id) && !loop.Up(m.id) {
			t := k.target(m.id)
			loop.Restart(m.id, t.Fresh())
			if t.Up != nil {
				t.Up()
			}
		}
	case endResume:
		if remove(&k.paused, m.id) {
			loop.Resume(m.id)
			if t := k.target(m.id); t.Up != nil {
				t.Up()
			}
		}
	case endPartition:
		m.server.Heal(m.id)
	}
}

func (k *Chaos) target(id simclock.ActorID) Target {
	for _, t := range k.Targets {
		if t.ID == id {
			return t
		}
	}
	panic("nemesis: unknown target")
}

func remove(list *[]simclock.ActorID, id simclock.ActorID) bool {
	for i, x := range *list {
		if x == id {
			*list = append((*list)[:i], (*list)[i+1:]...)
			return true
		}
	}
	return false
}

// heal ends every fault for good.
func (k *Chaos) heal(ctx *simclock.Context) {
	k.healed = true
	loop := ctx.Loop()
	ctx.Rec("nemesis.heal").Flag("faults_off").End()
	for _, id := range k.crashed {
		if !loop.Up(id) {
			t := k.target(id)
			loop.Restart(id, t.Fresh())
			if t.Up != nil {
				t.Up()
			}
		}
	}
	for _, id := range k.paused {
		loop.Resume(id)
		if t := k.target(id); t.Up != nil {
			t.Up()
		}
	}
	k.crashed, k.paused = nil, nil
	for _, t := range k.Targets {
		if clock := loop.Clock(t.ID); clock != nil {
			clock.SetDrift(ctx.Now(), 0)
		}
	}
	for _, s := range k.Servers {
		s.SetFaults(k.Quiet)
		s.HealAll()
	}
	if k.OnHeal != nil {
		k.OnHeal(ctx)
	}
}
