package nemesis

import (
	"fmt"
	"time"

	"shardsim/model/migrate/group"
	"shardsim/model/migrate/rpc"
	"shardsim/simclock"
	"shardsim/simkv"
)

// MigrateChaos is the nemesis of the migration scenarios. Until HealAt, on
// every tick it may move a group's leadership, crash a node (restarting it
// later with fresh volatile state), pause a node (resuming it later as a
// zombie), jump or drift a node's clock, and partition an actor from the
// metadata store or force a metadata leader change. Request loss, ambiguity
// and delay on the group network and the metadata store are configured on
// those networks. At most one node is down or paused at a time, so every
// group keeps a quorum. At HealAt every fault stops: nodes come back, the
// networks turn quiet, partitions heal.
type MigrateChaos struct {
	Cluster *group.Cluster
	NewNode func(n int) simclock.Actor // a fresh actor value for node n's restart
	Net     *rpc.Network
	NetHeal rpc.Faults
	Meta    *simkv.Server
	// MetaHeal is the metadata store's network after healing.
	MetaHeal   simkv.FaultConfig
	MetaActors []simclock.ActorID // actors that may be cut off from the metadata store

	Tick          time.Duration
	LeaderRate    float64 // per tick: move one group's leadership
	CrashRate     float64 // per tick: crash a node
	PauseRate     float64 // per tick: pause a node
	SkewRate      float64 // per tick: jump or drift a node's clock
	PartitionRate float64 // per tick: cut an actor off the metadata store
	MetaLeader    float64 // per tick: metadata store leader change
	MaxDown       time.Duration
	HealAt        simclock.Time

	down    int // node down or paused, -1 if none
	crashed bool
	stats   ChaosStats
}

// ChaosStats counts the faults injected.
type ChaosStats struct {
	LeaderMoves, Crashes, Pauses, ClockFaults, Partitions, MetaLeaderChanges int
}

// Stats returns what the nemesis did.
func (m *MigrateChaos) Stats() ChaosStats { return m.stats }

type migTick struct{}
type migUp struct{ node int }
type migHeal struct{ actor simclock.ActorID }

// Receive implements simclock.Actor.
func (m *MigrateChaos) Receive(ctx *simclock.Context, msg any) {
	switch x := msg.(type) {
	case simclock.Started:
		m.down = -1
		ctx.After(m.Tick, migTick{})
		ctx.Defer(m.HealAt.Sub(ctx.Now()), m.heal)
	case migTick:
		if ctx.Now() >= m.HealAt {
			return
		}
		m.tick(ctx)
		ctx.After(m.Tick, migTick{})
	case migUp:
		m.bringUp(ctx, x.node)
	case migHeal:
		m.Meta.Heal(x.actor)
	}
}

func (m *MigrateChaos) tick(ctx *simclock.Context) {
	c := ctx.Choices()
	loop := ctx.Loop()
	nodes := m.Cluster.Nodes()
	if c.Chance(m.LeaderRate) {
		g := c.Intn(m.Cluster.Groups())
		prefer := c.Intn(nodes)
		m.stats.LeaderMoves++
		ctx.Log("nemesis.leader", fmt.Sprintf("g%d prefer=n%d", g, prefer))
		m.Cluster.Depose(g, prefer, m.Cluster.ElectionWindow())
	}
	if m.down < 0 && c.Chance(m.CrashRate) {
		n := c.Intn(nodes)
		m.down, m.crashed = n, true
		m.stats.Crashes++
		ctx.Log("nemesis.crash", fmt.Sprintf("n%d", n))
		loop.Crash(m.Cluster.Actor(n))
		m.Cluster.NodeDown(n, true)
		ctx.After(c.Duration(m.Tick, m.MaxDown), migUp{node: n})
	} else if m.down < 0 && c.Chance(m.PauseRate) {
		n := c.Intn(nodes)
		m.down, m.crashed = n, false
		m.stats.Pauses++
		ctx.Log("nemesis.pause", fmt.Sprintf("n%d", n))
		loop.Pause(m.Cluster.Actor(n))
		m.Cluster.NodeDown(n, false)
		ctx.After(c.Duration(m.Tick, m.MaxDown), migUp{node: n})
	}
	if c.Chance(m.SkewRate) {
		n := c.Intn(nodes)
		clk := loop.Clock(m.Cluster.Actor(n))
		if clk != nil {
			m.stats.ClockFaults++
			if c.Chance(0.5) {
				d := c.Duration(-clk.MaxSkew(), clk.MaxSkew())
				clk.Jump(ctx.Now(), d)
				ctx.Log("nemesis.clock", fmt.Sprintf("n%d jump %v", n, d))
			} else {
				ppm := c.Between(-200_000, 200_000)
				clk.SetDrift(ctx.Now(), ppm)
				ctx.Log("nemesis.clock", fmt.Sprintf("n%d drift %dppm", n, ppm))
			}
		}
	}
	if len(m.MetaActors) > 0 && c.Chance(m.PartitionRate) {
		a := simclock.Pick(c, m.MetaActors)
		m.stats.Partitions++
		m.Meta.Partition(a)
		ctx.After(c.Duration(m.Tick, m.MaxDown), migHeal{actor: a})
	}
	if c.Chance(m.MetaLeader) {
		m.stats.MetaLeaderChanges++
		m.Meta.LeaderChange(c.Duration(time.Millisecond, m.Tick))
	}
}

// bringUp restarts a crashed node or resumes a paused one.
func (m *MigrateChaos) bringUp(ctx *simclock.Context, n int) {
	if m.down != n {
		return
	}
	loop := ctx.Loop()
	a := m.Cluster.Actor(n)
	if m.crashed {
		ctx.Log("nemesis.restart", fmt.Sprintf("n%d", n))
		loop.Restart(a, m.NewNode(n))
	} else {
		ctx.Log("nemesis.resume", fmt.Sprintf("n%d", n))
		loop.Resume(a)
	}
	m.Cluster.NodeUp(n)
	m.down = -1
}

func (m *MigrateChaos) heal(ctx *simclock.Context) {
	ctx.Log("nemesis.heal", "faults off")
	if m.down >= 0 {
		m.bringUp(ctx, m.down)
	}
	m.Net.SetFaults(m.NetHeal)
	m.Meta.SetFaults(m.MetaHeal)
	m.Meta.HealAll()
}
