package keymove

import (
	"fmt"
	"sort"
	"time"

	"shardsim/simclock"
	"shardsim/simkv"
)

// Dialer opens a task's handles on the world: its metadata KV and a KV per
// shard. A simulated world dials simkv clients owned by the task's actor.
type Dialer func(t *simclock.Task) (meta simkv.KV, shard func(ShardID) simkv.KV)

// SimRuntime runs an executor as tasks of one simclock actor: Parallel
// starts one task per worker, semaphores park tasks, and everything dies
// with the actor's incarnation (a crash of the executor).
type SimRuntime struct {
	simConn
	dial Dialer
	seq  int
}

var _ Runtime = (*SimRuntime)(nil)

// NewSimRuntime returns the runtime of task t.
func NewSimRuntime(t *simclock.Task, dial Dialer) *SimRuntime {
	return &SimRuntime{simConn: newSimConn(t, dial), dial: dial}
}

type simConn struct {
	t     *simclock.Task
	meta  simkv.KV
	shard func(ShardID) simkv.KV
}

func newSimConn(t *simclock.Task, dial Dialer) simConn {
	m, s := dial(t)
	return simConn{t: t, meta: m, shard: s}
}

func (c *simConn) Meta() simkv.KV             { return c.meta }
func (c *simConn) Shard(id ShardID) simkv.KV  { return c.shard(id) }
func (c *simConn) Sleep(d time.Duration)      { c.t.Sleep(d) }
func (c *simConn) Now() int64                 { return int64(c.t.Local()) }
func (c *simConn) task() *simclock.Task       { return c.t }
func (c *simConn) context() *simclock.Context { return c.t.Context() }
func (r *SimRuntime) workerName(i int) string { return fmt.Sprintf("%s/w%d.%d", r.t.Name(), r.seq, i) }
func (r *SimRuntime) resumeLater(f func(any)) {
	r.context().Defer(0, func(*simclock.Context) { f(nil) })
}

// Parallel implements Runtime. The workers start from an event of the
// actor (never from inside a running task) and the last one to finish
// wakes the caller through another event.
func (r *SimRuntime) Parallel(n int, body func(int, Conn)) {
	if n <= 0 {
		return
	}
	r.seq++
	left := n
	r.t.Await(func(resume func(any)) {
		r.context().Defer(0, func(ctx *simclock.Context) {
			for i := 0; i < n; i++ {
				i := i
				ctx.Go(r.workerName(i), func(t *simclock.Task) {
					c := newSimConn(t, r.dial)
					body(i, &c)
					if left--; left == 0 {
						r.resumeLater(resume)
					}
				})
			}
		})
	})
}

// NewSem implements Runtime.
func (r *SimRuntime) NewSem(n int) Sem { return &simSem{rt: r, cap: n} }

// simSem parks tasks beyond its capacity, first come first served.
type simSem struct {
	rt      *SimRuntime
	cap     int
	used    int
	waiters []func(any)
}

type taskConn interface{ task() *simclock.Task }

func (s *simSem) Acquire(c Conn) {
	if s.used < s.cap {
		s.used++
		return
	}
	c.(taskConn).task().Await(func(resume func(any)) { s.waiters = append(s.waiters, resume) })
}

// Release hands the slot straight to the first waiter, if any.
func (s *simSem) Release(Conn) {
	if len(s.waiters) == 0 {
		s.used--
		return
	}
	w := s.waiters[0]
	s.waiters = s.waiters[1:]
	s.rt.resumeLater(w)
}

func sortedShardIDs[V any](m map[ShardID]V) []ShardID {
	out := make([]ShardID, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
