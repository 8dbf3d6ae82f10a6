package listdelta

import (
	"fmt"

	"shardsim/model/bugs"
)

// MULTI/EXEC (seed 001, "Integration with MULTI/EXEC", and the fixes of
// its last commits). A transaction of several commands on one list reads
// the metadata at one snapshot, runs the commands in order (each reads
// what the ones before it wrote), and writes the base metadata itself
// rather than a delta, deleting the deltas it folded. It keeps every
// boundary read of its commands, and puts the whole delta range of the
// list into its read set: a delta committed by a standalone command after
// the snapshot aborts it, so it never writes a base that misses one. The
// seed's Jepsen failure (G0-realtime) was exactly that: the base resolved
// at an old snapshot, the deltas to delete listed at a newer one, and a
// concurrent RPUSH's delta deleted without being folded
// (exec-stale-snapshot). A draft that wrote the base and left the deltas
// in place counted them twice (exec-keeps-deltas).

// Cmd is one command of a MULTI/EXEC.
type Cmd struct {
	Op    string   // RPUSH, LPUSH, LPOP, RPOP, LRANGE, LLEN, LINDEX, LSET, DEL
	Vals  []string // pushed values; LSET's value is Vals[0]
	Index int64    // LINDEX, LSET
}

// String renders the command.
func (c Cmd) String() string {
	switch c.Op {
	case "RPUSH", "LPUSH":
		return fmt.Sprintf("%s %v", c.Op, c.Vals)
	case "LINDEX":
		return fmt.Sprintf("%s %d", c.Op, c.Index)
	case "LSET":
		return fmt.Sprintf("%s %d %v", c.Op, c.Index, c.Vals)
	}
	return c.Op
}

// Answer is one command's answer: a value (pops, LINDEX), whether there
// was one, a number (pushes, LLEN, DEL), or the items (LRANGE); Err is a
// command's own error (LSET out of range), which does not stop the others.
type Answer struct {
	Val   string
	OK    bool
	N     int64
	Items []string
	Err   error
}

// Exec runs cmds on list uk as one transaction and returns their answers.
func (s *Store) Exec(uk string, cmds []Cmd) ([]Answer, error) {
	out, err := s.run(func(a *attempt) (any, error) {
		v, err := a.openList(uk, s.cfg.MaxDeltaScanLimit)
		if err != nil {
			return nil, err
		}
		ans := make([]Answer, len(cmds))
		for i, c := range cmds {
			if ans[i], err = v.exec(c); err != nil {
				return nil, err
			}
		}
		if v.touched || v.deleted {
			err = v.finishBase()
		}
		return ans, err
	}, nil)
	if err != nil {
		return nil, err
	}
	s.stats.Execs++
	return out.([]Answer), nil
}

// exec runs one command of a MULTI/EXEC on the view.
func (v *listView) exec(c Cmd) (Answer, error) {
	var a Answer
	var err error
	switch c.Op {
	case "RPUSH", "LPUSH":
		a.N, err = v.push(c.Op == "RPUSH", c.Vals)
	case "LPOP", "RPOP":
		a.Val, a.OK, err = v.pop(c.Op == "RPOP")
	case "LRANGE":
		a.Items, err = v.lrange(0, -1)
	case "LLEN":
		a.N = v.m.Len
	case "LINDEX":
		a.Val, a.OK, err = v.lindex(c.Index)
	case "LSET":
		a.Err = v.lset(c.Index, c.Vals[0])
	case "DEL":
		if v.m.Len > 0 {
			a.N = 1
		}
		if v.res.exists || v.touched {
			err = v.deleteAllInExec()
		}
	default:
		err = fmt.Errorf("listdelta: unknown command %q", c.Op)
	}
	return a, err
}

// deleteAllInExec deletes the list inside a MULTI/EXEC: every row, as DEL
// does; a later command of the transaction starts a new list.
func (v *listView) deleteAllInExec() error {
	if !v.fullyRead {
		// DEL needs every delta, not the resolution's limited read.
		r, err := v.a.resolve(List, v.uk, 0)
		if err != nil {
			return err
		}
		v.res.deltas, v.fullyRead = r.deltas, true
	}
	if err := v.deleteAll(); err != nil {
		return err
	}
	v.deleted = true
	return nil
}

// finishBase ends a MULTI/EXEC: the base metadata is written (deleted when
// the transaction deleted the list and left it empty), the deltas folded
// at the snapshot are deleted, and the delta range joins the read set.
func (v *listView) finishBase() error {
	a, lay := v.a, v.a.s.lay
	_, dspan := lay.deltaSpan(List, v.uk)
	drop := v.res.deltas
	switch {
	case a.s.bugs.Has(bugs.ListdeltaExecStaleSnapshot):
		// The wrong variant lists the deltas to delete at the latest
		// timestamp, takes that timestamp as the one its conflicts are
		// judged from, and does not guard the range: the base resolved at
		// the older snapshot misses a delta it deletes.
		fam, _ := lay.deltaSpan(List, v.uk)
		rows, ts, err := a.scanLatest(fam, v.uk, dspan)
		if err != nil {
			return err
		}
		drop, a.ts = rows, ts
	case a.s.bugs.Has(bugs.ListdeltaExecKeepsDeltas):
		drop = nil
		a.reads = append(a.reads, readOf(dspan))
	default:
		a.reads = append(a.reads, readOf(dspan))
	}
	for _, d := range drop {
		a.del(d.Key)
	}
	meta := lay.metaKey(List, v.uk)
	if v.deleted && !v.touched {
		a.del(meta)
		return nil
	}
	a.put(meta, encodeMeta(v.m))
	return nil
}
