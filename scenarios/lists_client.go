package scenarios

import (
	"errors"
	"fmt"
	"time"

	"shardsim/checker/listcheck"
	"shardsim/model/listdelta"
	"shardsim/model/migrate"
	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
	"shardsim/simclock"
)

// coordBackend is listdelta's Backend over a coordinator of the migrating
// store, for the task that runs the current command.
type coordBackend struct {
	coord *migrate.Coordinator
	t     *simclock.Task
	epoch uint64 // HLC epoch of node clocks (ms)
	// offset is how far this client's own clock is from virtual time: the
	// machines clients run on do not share one clock (only the
	// shared-commit-ts variant reads it).
	offset time.Duration
}

func (b *coordBackend) Get(raw string, ts hlc.TS) (mvcc.Read, hlc.TS, error) {
	r, err := b.coord.Read(b.t, raw, ts)
	return r.Read, r.TS, err
}

func (b *coordBackend) Scan(fam keys.Family, rk string, raw keys.Span, ts hlc.TS, limit int) ([]mvcc.ScanRow, hlc.TS, error) {
	r, err := b.coord.ScanRaw(b.t, fam, keys.Exactly(rk), raw, ts, limit)
	return r.Rows, r.TS, err
}

func (b *coordBackend) Commit(tx fsm.Txn) (hlc.TS, error) {
	r, err := b.coord.Commit(b.t, tx, true)
	return r.TS, err
}

// Now is the client's own clock in HLC form (only the shared-commit-ts
// variant reads it).
func (b *coordBackend) Now() hlc.TS {
	return hlc.Make(b.epoch+uint64(max(int64(b.t.Local())+int64(b.offset), 0)/1e6), 0)
}

func (b *coordBackend) Backoff(attempt int) {
	b.t.Sleep(time.Duration(attempt) * 3 * time.Millisecond)
}

// listClient runs one client's collection commands through its own
// coordinator and listdelta store, and records every outcome.
type listClient struct {
	idx   int
	p     *listsPart
	coord *migrate.Coordinator
	be    *coordBackend
	store *listdelta.Store
	seq   int
	cur   attemptOf // the operation whose attempts the store is sending
	done  bool
}

// Receive implements simclock.Actor.
func (c *listClient) Receive(ctx *simclock.Context, msg any) {
	if _, ok := msg.(simclock.Started); !ok {
		return
	}
	c.coord.Start(ctx)
	ctx.Go("collections", func(t *simclock.Task) {
		c.be.t = t
		ch := t.Choices()
		for i := 0; i < c.p.opts.ops || c.p.lingering(i); i++ {
			c.one(t, ch)
			pace := c.p.opts.pace
			if i >= c.p.opts.ops {
				pace = c.p.opts.lingerPace
			}
			t.Sleep(ch.Duration(0, pace))
		}
		c.done = true
		c.p.clientDone(t.Now())
		ctx.Rec("client.done").Int("ops", int64(c.p.opts.ops)).End()
	})
}

// one runs one drawn operation.
func (c *listClient) one(t *simclock.Task, ch *simclock.Choices) {
	o := c.p.opts
	if ch.Chance(1 - o.listShare) { // phrased so the quiet run (all-zero draws) works on lists
		c.counted(t, ch)
		return
	}
	list := simclock.Pick(ch, o.lists)
	var cmds []listcheck.Cmd
	if ch.Chance(o.exec) {
		for i, n := 0, 2+ch.Intn(3); i < n; i++ {
			cmds = append(cmds, c.drawCmd(ch))
		}
	} else {
		cmds = []listcheck.Cmd{c.drawCmd(ch)}
	}
	c.runList(t, list, cmds)
}

// drawCmd draws one list command; pushed values are unique in the run.
func (c *listClient) drawCmd(ch *simclock.Choices) listcheck.Cmd {
	o := c.p.opts
	r := float64(ch.Intn(1000)) / 1000
	switch {
	case r < o.push:
		cmd := listcheck.Cmd{Op: "RPUSH"}
		if ch.Chance(0.5) {
			cmd.Op = "LPUSH"
		}
		for i, n := 0, 1+ch.Intn(o.pushMax); i < n; i++ {
			cmd.Vals = append(cmd.Vals, c.value())
		}
		return cmd
	case r < o.push+o.pop:
		return listcheck.Cmd{Op: simclock.Pick(ch, []string{"LPOP", "RPOP"})}
	case r < o.push+o.pop+o.lset:
		return listcheck.Cmd{Op: "LSET", Index: int64(ch.Intn(7) - 3), Vals: []string{c.value()}}
	case r < o.push+o.pop+o.lset+o.del:
		return listcheck.Cmd{Op: "DEL"}
	}
	switch ch.Intn(3) {
	case 0:
		return listcheck.Cmd{Op: "LLEN"}
	case 1:
		return listcheck.Cmd{Op: "LINDEX", Index: int64(ch.Intn(7) - 3)}
	}
	return listcheck.Cmd{Op: "LRANGE"}
}

// value returns a value no other command of the run pushes.
func (c *listClient) value() string {
	c.seq++
	return fmt.Sprintf("c%d.%d", c.idx, c.seq)
}

// runList runs cmds on list (one command, or a MULTI/EXEC) and records it.
func (c *listClient) runList(t *simclock.Task, list string, cmds []listcheck.Cmd) {
	c.seq++
	op := listcheck.Op{ID: fmt.Sprintf("c%d-%d", c.idx, c.seq), Client: c.idx, List: list, Cmds: cmds, Call: t.Now()}
	c.cur = attemptOf{op: op.ID, key: list, kind: listdelta.List, cmds: cmds}
	traced, d := c.p.m.w.Ops.Invoke(t.Context(), "list")
	d.Bytes("list", []byte(list)).Str("op", op.ID)
	for _, cmd := range cmds {
		d.Str("cmd", cmd.String())
	}
	d.End()
	ans, err := c.exec(list, cmds)
	op.Return = t.Now()
	switch {
	case err == nil:
		op.Answers = ans
	case errs.Ambiguous(err):
		op.Outcome = listcheck.Unknown
	default:
		op.Outcome = listcheck.Failed
	}
	d = traced.Complete(err)
	for _, a := range ans {
		d.Str("answer", a.String())
	}
	d.End()
	c.p.record(op, err)
}

// exec sends cmds through the store.
func (c *listClient) exec(list string, cmds []listcheck.Cmd) ([]listcheck.Answer, error) {
	s := c.store
	if len(cmds) > 1 {
		var lc []listdelta.Cmd
		for _, cmd := range cmds {
			lc = append(lc, listdelta.Cmd{Op: cmd.Op, Vals: cmd.Vals, Index: cmd.Index})
		}
		got, err := s.Exec(list, lc)
		if err != nil {
			return nil, err
		}
		out := make([]listcheck.Answer, len(got))
		for i, a := range got {
			out[i] = listcheck.Answer{Val: a.Val, OK: a.OK, N: a.N, Items: a.Items, Err: a.Err != nil}
			if cmds[i].Op == "LRANGE" && out[i].Items == nil {
				out[i].Items = []string{}
			}
		}
		return out, nil
	}
	var a listcheck.Answer
	var err error
	cmd := cmds[0]
	switch cmd.Op {
	case "RPUSH":
		a.N, err = s.RPush(list, cmd.Vals...)
	case "LPUSH":
		a.N, err = s.LPush(list, cmd.Vals...)
	case "LPOP":
		a.Val, a.OK, err = s.LPop(list)
	case "RPOP":
		a.Val, a.OK, err = s.RPop(list)
	case "LRANGE":
		a.Items, err = s.LRange(list, 0, -1)
		if a.Items == nil {
			a.Items = []string{}
		}
	case "LLEN":
		a.N, err = s.LLen(list)
	case "LINDEX":
		a.Val, a.OK, err = s.LIndex(list, cmd.Index)
	case "LSET":
		err = s.LSet(list, cmd.Index, cmd.Vals[0])
		if errors.Is(err, listdelta.ErrIndexOutOfRange) {
			a.Err, err = true, nil
		}
	case "DEL":
		var had bool
		had, err = s.Del(list)
		if had {
			a.N = 1
		}
	}
	if err != nil {
		return nil, err
	}
	return []listcheck.Answer{a}, nil
}

// counted runs one command on a hash, set or sorted set.
func (c *listClient) counted(t *simclock.Task, ch *simclock.Choices) {
	k := simclock.Pick(ch, c.p.opts.counted)
	member := fmt.Sprintf("m%d", ch.Intn(4))
	c.seq++
	c.cur = attemptOf{op: fmt.Sprintf("c%d-%d", c.idx, c.seq), key: k.key, kind: k.kind}
	var err error
	kind := "count"
	switch ch.Intn(3) {
	case 0:
		kind = "add"
		switch k.kind {
		case listdelta.Hash:
			_, err = c.store.HSet(k.key, member, c.value())
		case listdelta.Set:
			_, err = c.store.SAdd(k.key, member)
		default:
			_, err = c.store.ZAdd(k.key, member, fmt.Sprint(ch.Intn(100)))
		}
	case 1:
		kind = "remove"
		switch k.kind {
		case listdelta.Hash:
			_, err = c.store.HDel(k.key, member)
		case listdelta.Set:
			_, err = c.store.SRem(k.key, member)
		default:
			_, err = c.store.ZRem(k.key, member)
		}
	default:
		switch k.kind {
		case listdelta.Hash:
			_, err = c.store.HLen(k.key)
		case listdelta.Set:
			_, err = c.store.SCard(k.key)
		default:
			_, err = c.store.ZCard(k.key)
		}
	}
	t.Context().Rec("collection").Str("kind", k.kind.String()).Bytes("key", []byte(k.key)).Str("cmd", kind).Err("err", err).End()
	c.p.recordCounted(err)
}
