package listcheck

import (
	"fmt"
	"slices"

	"shardsim/property"
	"shardsim/simclock"
)

// Truth is the checker's own list of what every list holds, built by
// replaying, in the order the owning group commits them, the commands of
// every committed transaction on its own deque: the order a linearizable
// store must behave in. The world registers each transaction a command
// sends (Register) before it can commit, and reports each first commit
// (Committed). The stores' rows are then judged against it
// (CheckList). What a value's removal was (a pop, DEL or LSET, and by
// which operation) is kept for L.NoLostItem.
type Truth struct {
	lists     map[string][]string
	txns      map[string]registered
	fates     map[string]fate
	committed map[string]simclock.Time // op id -> first commit
}

type registered struct {
	op   string
	list string
	cmds []Cmd // nil: a compaction
}

// fate is how a value left its list.
type fate struct {
	how string // "pop", "del", "lset"
	op  string
}

// NewTruth returns an empty truth.
func NewTruth() *Truth {
	return &Truth{lists: map[string][]string{}, txns: map[string]registered{}, fates: map[string]fate{}, committed: map[string]simclock.Time{}}
}

// Register says transaction txn, if it commits, runs cmds of operation op
// on list (cmds nil: it only compacts).
func (t *Truth) Register(txn, op, list string, cmds []Cmd) {
	t.txns[txn] = registered{op: op, list: list, cmds: cmds}
}

// Known reports whether txn was registered, and its list.
func (t *Truth) Known(txn string) (string, bool) {
	r, ok := t.txns[txn]
	return r.list, ok
}

// List returns what list holds in the truth.
func (t *Truth) List(list string) []string { return t.lists[list] }

// CommittedAt returns when operation op's transaction first committed.
func (t *Truth) CommittedAt(op string) (simclock.Time, bool) {
	at, ok := t.committed[op]
	return at, ok
}

// Committed replays transaction txn, which the owning group just applied
// (first time) at the given time. A standalone pop of a list the truth
// holds empty means the store judged the list otherwise (it commits
// nothing for a pop it finds empty): an L.MetaConsistent violation. Inside
// a MULTI/EXEC such a pop, like an LSET out of range, changes nothing.
func (t *Truth) Committed(txn string, at simclock.Time) *property.Violation {
	r, ok := t.txns[txn]
	if !ok {
		return nil
	}
	if r.cmds == nil {
		return nil
	}
	if _, seen := t.committed[r.op]; !seen {
		t.committed[r.op] = at
	}
	l := slices.Clone(t.lists[r.list])
	for _, c := range r.cmds {
		var err string
		l, err = t.replay(l, c, r.op, len(r.cmds) == 1)
		if err != "" {
			return &property.Violation{Property: property.LMetaConsistent, Subject: listSubject(r.list),
				Detail: fmt.Sprintf("list %q: operation %s committed %s, %s (the list held %d items by the truth)", r.list, r.op, c, err, len(t.lists[r.list]))}
		}
	}
	t.lists[r.list] = l
	return nil
}

// replay runs one command on the truth's deque.
func (t *Truth) replay(l []string, c Cmd, op string, alone bool) ([]string, string) {
	switch c.Op {
	case "RPUSH":
		return append(l, c.Vals...), ""
	case "LPUSH":
		for _, v := range c.Vals {
			l = append([]string{v}, l...)
		}
		return l, ""
	case "LPOP", "RPOP":
		if len(l) == 0 && alone {
			return l, "but the list was empty"
		}
		if len(l) == 0 {
			// Inside a MULTI/EXEC, Redis answers nil and changes nothing;
			// whether the store judged the list empty too is for
			// L.Linearizable (the answer) and the rows check.
			return l, ""
		}
		i := 0
		if c.Op == "RPOP" {
			i = len(l) - 1
		}
		t.fates[l[i]] = fate{how: "pop", op: op}
		return slices.Delete(l, i, i+1), ""
	case "LSET":
		i := c.Index
		if i < 0 {
			i += int64(len(l))
		}
		if i < 0 || i >= int64(len(l)) {
			return l, "" // Redis answers an error and changes nothing (inside a MULTI/EXEC too)
		}
		t.fates[l[i]] = fate{how: "lset", op: op}
		l[i] = c.Vals[0]
		return l, ""
	case "DEL":
		for _, v := range l {
			t.fates[v] = fate{how: "del", op: op}
		}
		return nil, ""
	}
	return l, ""
}

// listSubject names a list for reports.
func listSubject(list string) property.Subject {
	return property.Subject{Kind: property.SubjectKey, ID: list}
}

// Snapshot is the store of the group that owns a collection, as the
// checker reads it: the visible rows (newest versions that are neither
// tombstones nor expired; staged rows merged where a migration says so)
// whose raw keys lie in [start, end), in key order.
type Snapshot interface {
	Visible(start, end string) []Row
}

// ListRows is what a list's rows say, decoded by the checker.
type ListRows struct {
	Base        bool  // a base metadata row exists
	Deltas      int   // unapplied deltas
	Head, Len   int64 // base plus deltas
	Items       map[int64]string
	Claims      map[int64]bool
	Undecodable []string
}

// ReadList decodes list k's rows from s.
func ReadList(s Snapshot, k string) ListRows {
	lr := ListRows{Items: map[int64]string{}, Claims: map[int64]bool{}}
	each(s, listFamily.meta, k, rowMeta, func(_, v string) {
		h, n, ok := meta(v)
		if !ok {
			lr.Undecodable = append(lr.Undecodable, "base")
		}
		lr.Base, lr.Head, lr.Len = true, lr.Head+h, lr.Len+n
	})
	each(s, listFamily.delta, k, rowDelta, func(_, v string) {
		h, n, ok := meta(v)
		if !ok {
			lr.Undecodable = append(lr.Undecodable, "delta")
		}
		lr.Deltas++
		lr.Head, lr.Len = lr.Head+h, lr.Len+n
	})
	each(s, listFamily.item, k, rowItem, func(sfx, v string) { lr.Items[position(sfx)] = v })
	each(s, listFamily.claim, k, rowClaim, func(sfx, _ string) { lr.Claims[position(sfx)] = true })
	return lr
}

// Contents returns the items a reader of the rows finds: positions
// [Head, Head+Len), claimed ones skipped.
func (lr ListRows) Contents() []string {
	var out []string
	for p := lr.Head; p < lr.Head+lr.Len; p++ {
		if v, ok := lr.Items[p]; ok && !lr.Claims[p] {
			out = append(out, v)
		}
	}
	return out
}

// each calls fn with the suffix and value of every visible row of k under
// family prefix p.
func each(s Snapshot, p, k string, rk rowKind, fn func(suffix, value string)) {
	for _, r := range ranges(p, k) {
		for _, row := range s.Visible(r[0], r[1]) {
			if who, sfx, ok := owner(row.Key, p, rk); ok && who == k {
				fn(sfx, row.Value)
			}
		}
	}
}

// CheckList judges L.MetaConsistent for list k: its base metadata plus the
// unapplied deltas must give the truth's length, and the positions
// [head, head+len) must hold exactly the truth's items, in order, none of
// them claimed.
func (t *Truth) CheckList(s Snapshot, k string) *property.Violation {
	lr := ReadList(s, k)
	want := t.lists[k]
	fail := func(format string, args ...any) *property.Violation {
		return &property.Violation{Property: property.LMetaConsistent, Subject: listSubject(k),
			Detail: fmt.Sprintf("list %q: ", k) + fmt.Sprintf(format, args...) + fmt.Sprintf(" (head %d, length %d from %d deltas and base %v; the truth holds %q)", lr.Head, lr.Len, lr.Deltas, lr.Base, want)}
	}
	if len(lr.Undecodable) > 0 {
		return fail("undecodable %s row", lr.Undecodable[0])
	}
	if lr.Len != int64(len(want)) {
		return fail("the metadata says %d items, the truth %d", lr.Len, len(want))
	}
	for i, v := range want {
		p := lr.Head + int64(i)
		got, ok := lr.Items[p]
		switch {
		case lr.Claims[p]:
			return fail("position %d (index %d) is claimed", p, i)
		case !ok:
			return fail("position %d (index %d) holds no item, the truth %q", p, i, v)
		case got != v:
			return fail("position %d (index %d) holds %q, the truth %q", p, i, got, v)
		}
	}
	return nil
}

// CheckCount judges L.CountConsistent for the hash, set or sorted set k of
// kind ("hash", "set", "zset"): its base count plus the unapplied deltas
// must equal the number of its member rows.
func CheckCount(s Snapshot, kind, k string) *property.Violation {
	f := countedFamilies[kind]
	var n, deltas, members int64
	bad := false
	each(s, f.meta, k, rowMeta, func(_, v string) {
		_, c, ok := meta(v)
		bad = bad || !ok
		n += c
	})
	each(s, f.delta, k, rowDelta, func(_, v string) {
		_, c, ok := meta(v)
		bad = bad || !ok
		n += c
		deltas++
	})
	each(s, f.member, k, rowMember, func(string, string) { members++ })
	if bad || n != members {
		return &property.Violation{Property: property.LCountConsistent, Subject: listSubject(k),
			Detail: fmt.Sprintf("%s %q: the count (base plus %d deltas) is %d but %d members exist", kind, k, deltas, n, members)}
	}
	return nil
}
