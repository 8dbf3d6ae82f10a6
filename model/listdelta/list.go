package listdelta

import (
	"shardsim/model/bugs"
	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/keys"
)

// listView is a list as one attempt sees and changes it: the metadata at
// the snapshot (start) and after the attempt's commands so far (m). The
// commands read and write through the attempt; a standalone command ends
// by writing its change as one delta, a MULTI/EXEC by writing the base
// metadata.
//
// Besides the rows it writes, each command puts into the read set the row
// a concurrent command on the other side of its boundary would write:
//
//   - a push at the tail reads the claim of the position before the tail
//     (an RPOP of the last item writes it), a push at the head the claim
//     of the head position (an LPOP writes it), also when the list is
//     empty (another client's push and a pop of it move the end);
//   - a pop at the head reads the item row just before the head (an LPUSH
//     writes it), a pop at the tail the item row at the tail (an RPUSH).
//
// Without this, a concurrent RPUSH and RPOP both commit (they write
// different rows, and the deltas never conflict): the length is right but
// the positions are not, and the pushed item falls outside the list while
// the popped one stays in it. The seed's final flows have that race (the
// no-boundary-read variant keeps it).
type listView struct {
	a         *attempt
	uk        string
	start, m  Meta
	res       resolved
	touched   bool // a command changed the list (since a DEL in a MULTI/EXEC)
	deleted   bool // a MULTI/EXEC deleted the list
	fullyRead bool // res holds every delta, not a limited read
}

// openList resolves list uk at the attempt's snapshot.
func (a *attempt) openList(uk string, limit int) (*listView, error) {
	if a.primary == "" {
		a.primary = uk
	}
	r, err := a.resolve(List, uk, limit)
	if err != nil {
		return nil, err
	}
	return &listView{a: a, uk: uk, start: r.Meta, m: r.Meta, res: r, fullyRead: limit == 0 || len(r.deltas) < limit}, nil
}

// boundaryReads says whether commands register their boundary rows.
func (v *listView) boundaryReads() bool { return !v.a.s.bugs.Has(bugs.ListdeltaNoBoundaryRead) }

// push writes vals at the tail (right) or, one after another, before the
// head, deleting a stale claim left at a reused position (seed 001 round
// 3: a later pop would skip the item). It returns the new length.
func (v *listView) push(right bool, vals []string) (int64, error) {
	a, n := v.a, int64(len(vals))
	if n == 0 {
		return v.m.Len, nil
	}
	lo := v.m.Tail()
	if !right {
		lo = v.m.Head - n
	}
	if v.boundaryReads() {
		// Also for an empty list: an RPUSH then an LPOP of its item moves
		// the head by writing this claim.
		edge := v.m.Tail() - 1
		if !right {
			edge = v.m.Head
		}
		a.register(a.s.lay.claimKey(v.uk, edge))
		if !a.s.bugs.Has(bugs.ListdeltaPushOneEnd) {
			v.readOtherEnd(right)
		}
	}
	stale, err := a.claims(v.uk, lo, lo+n, false)
	if err != nil {
		return 0, err
	}
	for i, val := range vals {
		pos := v.m.Tail() + int64(i)
		if !right {
			pos = v.m.Head - 1 - int64(i)
		}
		a.put(a.s.lay.itemKey(v.uk, pos), val)
		if stale[pos] && !a.s.bugs.Has(bugs.ListdeltaPushKeepsStaleClaim) {
			a.del(a.s.lay.claimKey(v.uk, pos))
		}
	}
	if right {
		v.m.Len += n
	} else {
		v.m = Meta{Head: v.m.Head - n, Len: v.m.Len + n}
	}
	v.touched = true
	return v.m.Len, nil
}

// readOtherEnd registers the rows a command at the other end writes: a
// push answers the new length, which a concurrent push or pop at the
// other end changes without touching this end's rows (an RPUSH and an
// LPUSH on an empty list would both answer their own count).
func (v *listView) readOtherEnd(right bool) {
	a := v.a
	if right {
		a.register(a.s.lay.itemKey(v.uk, v.m.Head-1), a.s.lay.claimKey(v.uk, v.m.Head))
		return
	}
	a.register(a.s.lay.itemKey(v.uk, v.m.Tail()), a.s.lay.claimKey(v.uk, v.m.Tail()-1))
}

// pop removes the first (or last) item and returns it: it claims the
// first unclaimed position from the head (or the last from the tail),
// never past the other end (seed 001 round 6), writing a claim row so
// that two concurrent pops of one item conflict. The pop-no-claim variant
// takes the head (or tail) position without a claim.
func (v *listView) pop(right bool) (string, bool, error) {
	a := v.a
	if v.m.Len <= 0 {
		return "", false, nil
	}
	if v.boundaryReads() {
		outside := v.m.Head - 1
		if right {
			outside = v.m.Tail()
		}
		a.register(a.s.lay.itemKey(v.uk, outside))
	}
	pos := v.m.Head
	if right {
		pos = v.m.Tail() - 1
	}
	claim := !a.s.bugs.Has(bugs.ListdeltaPopNoClaim)
	if claim {
		var err error
		if pos, err = v.unclaimed(right); err != nil {
			return "", false, err
		}
	}
	it, err := a.item(v.uk, pos, true)
	if err != nil {
		return "", false, err
	}
	if !it.Found {
		return "", false, ErrCorrupt
	}
	if claim {
		a.put(a.s.lay.claimKey(v.uk, pos), a.s.name)
	}
	if right {
		v.m.Len--
	} else {
		v.m = Meta{Head: v.m.Head + 1, Len: v.m.Len - 1}
	}
	v.touched = true
	return it.Version.Value, true, nil
}

// unclaimed finds the position a pop claims: scanning claim rows a window
// at a time (registered: a claim that appears there since the snapshot
// aborts the pop), from the head forwards or the tail backwards, and
// stopping at the other end.
func (v *listView) unclaimed(right bool) (int64, error) {
	a := v.a
	w := int64(max(a.s.cfg.ScanWindow, 1))
	lo, hi := v.m.Head, v.m.Tail()
	for lo < hi {
		wlo, whi := lo, min(lo+w, hi)
		if right {
			wlo, whi = max(hi-w, lo), hi
		}
		claimed, err := a.claims(v.uk, wlo, whi, true)
		if err != nil {
			return 0, err
		}
		for i := int64(0); i < whi-wlo; i++ {
			p := wlo + i
			if right {
				p = whi - 1 - i
			}
			if !claimed[p] {
				return p, nil
			}
			a.s.stats.ClaimSkips++
		}
		if right {
			hi = wlo
		} else {
			lo = whi
		}
	}
	return 0, ErrCorrupt
}

// index returns the position of index i (negative: from the tail), and
// whether the list has it.
func (v *listView) index(i int64) (int64, bool) {
	if i < 0 {
		i += v.m.Len
	}
	if i < 0 || i >= v.m.Len {
		return 0, false
	}
	return v.m.Head + i, true
}

// lrange returns the items at indexes [start, stop] (Redis semantics:
// negative indexes from the tail, clamped), skipping claimed positions.
func (v *listView) lrange(start, stop int64) ([]string, error) {
	a, n := v.a, v.m.Len
	if start < 0 {
		start = max(start+n, 0)
	}
	if stop < 0 {
		stop += n
	}
	stop = min(stop, n-1)
	if start > stop {
		return nil, nil
	}
	lo, hi := v.m.Head+start, v.m.Head+stop+1
	claimed, err := a.claims(v.uk, lo, hi, false)
	if err != nil {
		return nil, err
	}
	span := a.s.lay.posSpan(keys.FamilyListItem, v.uk, lo, hi)
	rows, err := a.scan(keys.FamilyListItem, v.uk, span, 0, false)
	if a.s.bugs.Has(bugs.ListdeltaRangeTornSnapshot) {
		rows, _, err = a.scanLatest(keys.FamilyListItem, v.uk, span)
	}
	if err != nil {
		return nil, err
	}
	// Inside a MULTI/EXEC the answer must still hold at the commit: an
	// LSET or a pop of a read item since the snapshot aborts it (a
	// standalone read commits nothing, so the read set costs nothing).
	a.reads = append(a.reads, readOf(span), readOf(a.s.lay.posSpan(keys.FamilyListClaim, v.uk, lo, hi)))
	var out []string
	for _, r := range rows {
		if p, ok := posOf(r.Key); ok && !claimed[p] {
			out = append(out, r.Value)
		}
	}
	return out, nil
}

// lindex returns the item at index i.
func (v *listView) lindex(i int64) (string, bool, error) {
	pos, ok := v.index(i)
	if !ok {
		return "", false, nil
	}
	it, err := v.a.item(v.uk, pos, false)
	// Registered as LRANGE's reads are (an LSET since the snapshot).
	v.a.register(v.a.s.lay.itemKey(v.uk, pos))
	if err != nil || !it.Found {
		return "", false, err
	}
	return it.Version.Value, true, nil
}

// lset replaces the item at index i. It reads the rows a concurrent push
// or pop at the head writes (either shifts the indexes) and the claim of
// the position it writes (a pop of that item).
func (v *listView) lset(i int64, val string) error {
	a := v.a
	pos, ok := v.index(i)
	if !ok {
		return ErrIndexOutOfRange
	}
	if v.boundaryReads() {
		a.register(a.s.lay.itemKey(v.uk, v.m.Head-1), a.s.lay.claimKey(v.uk, v.m.Head), a.s.lay.claimKey(v.uk, pos))
		if !a.s.bugs.Has(bugs.ListdeltaPushOneEnd) {
			// An index counts from one end: a push or pop at either end
			// moves the position it names (LSET -3 under an RPUSH).
			v.readOtherEnd(false)
		}
	}
	a.put(a.s.lay.itemKey(v.uk, pos), val)
	v.touched = true
	return nil
}

// finishDelta ends a standalone command: its change as one delta row.
func (v *listView) finishDelta() {
	if !v.touched {
		return
	}
	d := Meta{Head: v.m.Head - v.start.Head, Len: v.m.Len - v.start.Len}
	if d != (Meta{}) {
		v.a.putDelta(List, v.uk, d)
	}
}

// RPush appends vals to list uk and returns its new length.
func (s *Store) RPush(uk string, vals ...string) (int64, error) {
	return s.pushCmd(uk, true, vals)
}

// LPush pushes vals, one after another, before the head of list uk and
// returns its new length.
func (s *Store) LPush(uk string, vals ...string) (int64, error) {
	return s.pushCmd(uk, false, vals)
}

func (s *Store) pushCmd(uk string, right bool, vals []string) (int64, error) {
	out, err := s.run(func(a *attempt) (any, error) {
		v, err := a.openList(uk, s.cfg.MaxDeltaScanLimit)
		if err != nil {
			return nil, err
		}
		n, err := v.push(right, vals)
		v.finishDelta()
		return n, err
	}, nil)
	if err != nil {
		return 0, err
	}
	return out.(int64), nil
}

// LPop removes and returns the first item of list uk (ok false: empty).
func (s *Store) LPop(uk string) (string, bool, error) { return s.popCmd(uk, false) }

// RPop removes and returns the last item of list uk.
func (s *Store) RPop(uk string) (string, bool, error) { return s.popCmd(uk, true) }

type popped struct {
	val string
	ok  bool
}

func (s *Store) popCmd(uk string, right bool) (string, bool, error) {
	body := func(a *attempt) (any, error) {
		v, err := a.openList(uk, s.cfg.MaxDeltaScanLimit)
		if err != nil {
			return nil, err
		}
		val, ok, err := v.pop(right)
		v.finishDelta()
		return popped{val, ok}, err
	}
	out, err := s.run(body, func() { s.stats.ClaimConflicts++ })
	for i := 1; i < s.cfg.Attempts && errs.Ambiguous(err) && s.bugs.Has(bugs.ListdeltaPopRetryAmbiguous); i++ {
		// The wrong client retries a pop whose answer was lost as a new
		// pop: if the first one committed, its item reaches nobody.
		s.be.Backoff(i)
		out, err = s.run(body, func() { s.stats.ClaimConflicts++ })
	}
	if err != nil {
		return "", false, err
	}
	p := out.(popped)
	return p.val, p.ok, nil
}

// LRange returns the items of list uk at indexes [start, stop].
func (s *Store) LRange(uk string, start, stop int64) ([]string, error) {
	out, err := s.readList(uk, func(v *listView) (any, error) { return v.lrange(start, stop) })
	if err != nil {
		return nil, err
	}
	vals, _ := out.([]string)
	return vals, nil
}

// LLen returns the length of list uk.
func (s *Store) LLen(uk string) (int64, error) {
	out, err := s.readList(uk, func(v *listView) (any, error) { return v.m.Len, nil })
	if err != nil {
		return 0, err
	}
	return out.(int64), nil
}

// LIndex returns the item at index i of list uk.
func (s *Store) LIndex(uk string, i int64) (string, bool, error) {
	out, err := s.readList(uk, func(v *listView) (any, error) {
		val, ok, err := v.lindex(i)
		return popped{val, ok}, err
	})
	if err != nil {
		return "", false, err
	}
	p := out.(popped)
	return p.val, p.ok, nil
}

// LSet replaces the item at index i of list uk.
func (s *Store) LSet(uk string, i int64, val string) error {
	_, err := s.run(func(a *attempt) (any, error) {
		v, err := a.openList(uk, s.cfg.MaxDeltaScanLimit)
		if err != nil {
			return nil, err
		}
		return nil, v.lset(i, val)
	}, nil)
	return err
}

// readList runs a read-only command on list uk at one snapshot.
func (s *Store) readList(uk string, body func(*listView) (any, error)) (any, error) {
	return s.run(func(a *attempt) (any, error) {
		v, err := a.openList(uk, s.cfg.MaxDeltaScanLimit)
		if err != nil {
			return nil, err
		}
		return body(v)
	}, nil)
}

// Del deletes list uk and reports whether it held items: the base metadata,
// every delta (all of them, however many: the read set holds their range,
// so a delta that appears since the snapshot aborts the delete), every
// item and claim row, and the boundary rows in-flight pushes and pops
// read, so they abort rather than land on the deleted list. It is the only
// command that deletes the base metadata (seed 001: the Len = 0 tombstone
// stays otherwise).
func (s *Store) Del(uk string) (bool, error) {
	out, err := s.run(func(a *attempt) (any, error) {
		v, err := a.openList(uk, 0)
		if err != nil {
			return nil, err
		}
		if !v.res.exists {
			return false, nil
		}
		had := v.m.Len > 0
		return had, v.deleteAll()
	}, nil)
	if err != nil {
		return false, err
	}
	return out.(bool), nil
}

// deleteAll writes the deletion of every row of the list.
func (v *listView) deleteAll() error {
	a, lay := v.a, v.a.s.lay
	_, dspan := lay.deltaSpan(List, v.uk)
	a.reads = append(a.reads, readOf(dspan))
	for _, d := range v.res.deltas {
		a.del(d.Key)
	}
	for _, f := range []keys.Family{keys.FamilyListItem, keys.FamilyListClaim} {
		span := lay.prefixSpan(f, "", v.uk)
		rows, err := a.scan(f, v.uk, span, 0, true)
		if err != nil {
			return err
		}
		for _, r := range rows {
			a.del(r.Key)
		}
	}
	for _, k := range []string{lay.itemKey(v.uk, v.m.Head-1), lay.claimKey(v.uk, v.m.Head),
		lay.claimKey(v.uk, v.m.Tail()-1), lay.itemKey(v.uk, v.m.Tail())} {
		a.del(k)
	}
	a.del(lay.metaKey(List, v.uk))
	v.m, v.touched = Meta{}, false
	return nil
}
