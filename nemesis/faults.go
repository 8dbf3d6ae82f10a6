package nemesis

import (
	"time"

	"shardsim/simclock"
	"shardsim/simkv"
)

// Rates are the per-tick chances of each fault kind of the standard mix
// (the swarm draws them).
type Rates struct {
	Crash        float64 // crash a running target; it restarts after a drawn downtime
	Pause        float64 // pause a target; it resumes later as a zombie
	Partition    float64 // cut a target off from the KV for a while
	Skew         float64 // jump a target's clock or change its drift
	LeaderChange float64 // force an etcd leader change
	LeaseStorm   float64 // pause many targets at once for longer than a lease
}

// Any reports whether any fault is switched on.
func (r Rates) Any() bool {
	return r.Crash+r.Pause+r.Partition+r.Skew+r.LeaderChange+r.LeaseStorm > 0
}

// Standard is the fault mix of the worlds whose targets talk to one KV
// server (kv, coord, coord-zombie), in its fixed order: crashes, pauses,
// partitions, clock faults, leader changes, lease storms. Faults lasting a
// window last between a tick and maxWindow; a storm pauses every target
// for stormFor (plus up to a tick). With every rate zero it is empty, and
// the nemesis never ticks.
func Standard(server *simkv.Server, r Rates, maxWindow, stormFor time.Duration) []Fault {
	if !r.Any() {
		return nil
	}
	fs := []Fault{Crashes{Rate: r.Crash, MaxDown: maxWindow}, Pauses{Rate: r.Pause, MaxFor: maxWindow}}
	if server != nil {
		fs = append(fs, Partitions{Server: server, Rate: r.Partition, MaxFor: maxWindow})
	}
	fs = append(fs, ClockFaults{Rate: r.Skew})
	if server != nil {
		fs = append(fs, LeaderChanges{Server: server, Rate: r.LeaderChange, MaxWindow: maxWindow / 4})
	}
	return append(fs, LeaseStorms{Rate: r.LeaseStorm, For: stormFor})
}

// Crashes crashes one running target that can restart.
type Crashes struct {
	Rate    float64
	MaxDown time.Duration
}

// Strike implements Fault.
func (f Crashes) Strike(k *Chaos, ctx *simclock.Context) {
	if !ctx.Choices().Chance(f.Rate) {
		return
	}
	loop := ctx.Loop()
	if t, ok := k.Pick(ctx, func(t Target) bool { return t.Fresh != nil && loop.Up(t.ID) }); ok {
		k.Crash(ctx, t, f.MaxDown)
	}
}

// Pauses pauses one running target.
type Pauses struct {
	Rate   float64
	MaxFor time.Duration
}

// Strike implements Fault.
func (f Pauses) Strike(k *Chaos, ctx *simclock.Context) {
	if !ctx.Choices().Chance(f.Rate) {
		return
	}
	loop := ctx.Loop()
	if t, ok := k.Pick(ctx, func(t Target) bool { return loop.Up(t.ID) && !loop.Paused(t.ID) }); ok {
		k.Pause(ctx, t, k.Window(ctx, f.MaxFor))
	}
}

// Partitions cuts one actor that is not cut off yet from Server: one of
// Among, or of the nemesis's targets when Among is nil.
type Partitions struct {
	Server *simkv.Server
	Among  []simclock.ActorID
	Rate   float64
	MaxFor time.Duration
}

// Strike implements Fault.
func (f Partitions) Strike(k *Chaos, ctx *simclock.Context) {
	if !ctx.Choices().Chance(f.Rate) {
		return
	}
	var cands []simclock.ActorID
	if f.Among == nil {
		for _, t := range k.Targets {
			cands = append(cands, t.ID)
		}
	} else {
		cands = f.Among
	}
	var free []simclock.ActorID
	for _, id := range cands {
		if !f.Server.Partitioned(id) {
			free = append(free, id)
		}
	}
	if len(free) > 0 {
		k.Partition(ctx, f.Server, simclock.Pick(ctx.Choices(), free), f.MaxFor)
	}
}

// ClockFaults jumps or drifts the clock of one target that has one.
type ClockFaults struct{ Rate float64 }

// Strike implements Fault.
func (f ClockFaults) Strike(k *Chaos, ctx *simclock.Context) {
	if !ctx.Choices().Chance(f.Rate) {
		return
	}
	loop := ctx.Loop()
	if t, ok := k.Pick(ctx, func(t Target) bool { return loop.Clock(t.ID) != nil }); ok {
		k.Skew(ctx, t)
	}
}

// LeaderChanges forces Server's leader to change.
type LeaderChanges struct {
	Server    *simkv.Server
	Rate      float64
	MaxWindow time.Duration // in-flight requests resolve within it
}

// Strike implements Fault.
func (f LeaderChanges) Strike(k *Chaos, ctx *simclock.Context) {
	if ctx.Choices().Chance(f.Rate) {
		k.LeaderChange(ctx, f.Server, f.MaxWindow)
	}
}

// LeaseStorms stalls every running target past its leases at once (a GC
// storm, a host freeze); they wake as zombies within a tick of each other.
type LeaseStorms struct {
	Rate float64
	For  time.Duration
}

// Strike implements Fault.
func (f LeaseStorms) Strike(k *Chaos, ctx *simclock.Context) {
	c, loop := ctx.Choices(), ctx.Loop()
	if !c.Chance(f.Rate) {
		return
	}
	ctx.Rec("nemesis.lease-storm").Dur("for", f.For).End()
	k.stats.Storms++
	for _, t := range k.Targets {
		if loop.Up(t.ID) && !loop.Paused(t.ID) {
			k.Pause(ctx, t, f.For+c.Duration(0, k.Tick))
		}
	}
}
