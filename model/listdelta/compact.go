package listdelta

import (
	"shardsim/model/bugs"
	"shardsim/model/migrate/keys"
)

// Compaction (seed 001, "Background Compaction"). A compactor runs where
// the group's leader runs (the caller decides: only one should work at a
// time, but two racing ones are safe), and for one key at a time, in one
// transaction:
//
//   - folds at most MaxKeysPerCompactionTx deltas, the oldest first, into
//     the base metadata and deletes exactly those deltas (a delta that
//     commits meanwhile is neither folded nor deleted, so pushes racing a
//     compaction never conflict with it);
//   - keeps the base metadata when the count reaches zero: the Len = 0
//     tombstone stays until DEL (round 4: deleting it restarts positions
//     at zero under pushes that resolved the old metadata; round 8: no
//     lazy deletion either);
//   - for a list whose deltas it folded completely, deletes the item and
//     claim rows of popped positions: a contiguous run of claimed
//     positions below the head and above the tail, never crossing a
//     position without a claim (round 3), within MaxKeysPerCompactionTx
//     positions of each end. The position right before the head and the
//     one at the tail are left alone: pops and pushes read them (listView).
//     A counted collection's members are never deleted here (round 6:
//     HDEL/SREM/ZREM delete them; a compactor that deletes members at a
//     count of zero races the writers).
//
// Its read set holds the base metadata and the claim and item ranges it
// examined; with the rows it deletes, a pop or push racing it over those
// rows, or another compactor, aborts one of the two.

// CompactResult says what one compaction did.
type CompactResult struct {
	Folded    int  // deltas folded
	Collected int  // item and claim rows deleted
	Complete  bool // every delta was folded
	Meta      Meta // the base metadata written
}

// Deltas returns how many unapplied deltas kind's key uk has (at most
// limit; 0: all), for a compactor deciding whether it is due.
func (s *Store) Deltas(kind Kind, uk string, limit int) (int, error) {
	out, err := s.run(func(a *attempt) (any, error) {
		fam, span := a.s.lay.deltaSpan(kind, uk)
		rows, err := a.scan(fam, uk, span, limit, false)
		return len(rows), err
	}, nil)
	if err != nil {
		return 0, err
	}
	return out.(int), nil
}

// Compact compacts kind's key uk once.
func (s *Store) Compact(kind Kind, uk string) (CompactResult, error) {
	out, err := s.run(func(a *attempt) (any, error) {
		return a.compact(kind, uk)
	}, func() { s.stats.CompactConflict++ })
	if err != nil {
		return CompactResult{}, err
	}
	res := out.(CompactResult)
	if res.Folded > 0 || res.Collected > 0 {
		s.stats.Compactions++
		s.stats.DeltasFolded += res.Folded
		s.stats.RowsCollected += res.Collected
	}
	return res, nil
}

func (a *attempt) compact(kind Kind, uk string) (CompactResult, error) {
	a.primary = uk
	lim := max(a.s.cfg.MaxKeysPerCompactionTx, 1)
	meta := a.s.lay.metaKey(kind, uk)
	b, err := a.get(meta, true)
	if err != nil {
		return CompactResult{}, err
	}
	r := resolved{}
	if b.Found {
		if r.base, err = DecodeMeta(b.Version.Value); err != nil {
			return CompactResult{}, err
		}
		r.hasRow = true
	}
	fam, span := a.s.lay.deltaSpan(kind, uk)
	rows, err := a.scan(fam, uk, span, lim, false)
	if err != nil || len(rows) == 0 {
		return CompactResult{}, err
	}
	if r, err = r.fold(rows); err != nil {
		return CompactResult{}, err
	}
	res := CompactResult{Folded: len(rows), Complete: len(rows) < lim, Meta: r.Meta}
	for _, d := range rows {
		a.del(d.Key)
	}
	switch {
	case kind == List && r.Len == 0 && res.Complete && a.s.bugs.Has(bugs.ListdeltaDeleteMetaAtZero):
		a.del(meta) // the wrong variant: the list is empty, so its metadata goes
	default:
		a.put(meta, encodeMeta(r.Meta))
	}
	if kind == List && res.Complete {
		n, err := a.collect(uk, r.Meta, lim)
		if err != nil {
			return CompactResult{}, err
		}
		res.Collected = n
	}
	if kind != List && r.Len == 0 && a.s.bugs.Has(bugs.ListdeltaCompactDeletesMember) {
		n, err := a.deleteMembers(kind, uk)
		if err != nil {
			return CompactResult{}, err
		}
		res.Collected = n
	}
	return res, nil
}

// collect deletes the rows of popped positions next to list uk's ends.
func (a *attempt) collect(uk string, m Meta, lim int) (int, error) {
	n := 0
	below, err := a.claimedRun(uk, m.Head-1-int64(lim), m.Head-1, true)
	if err != nil {
		return 0, err
	}
	above, err := a.claimedRun(uk, m.Tail()+1, m.Tail()+1+int64(lim), false)
	if err != nil {
		return 0, err
	}
	for _, run := range [][2]int64{below, above} {
		if run[1] <= run[0] {
			continue
		}
		items, err := a.scan(keys.FamilyListItem, uk, a.s.lay.posSpan(keys.FamilyListItem, uk, run[0], run[1]), 0, true)
		if err != nil {
			return 0, err
		}
		for _, it := range items {
			a.del(it.Key)
			n++
		}
		for p := run[0]; p < run[1]; p++ {
			a.del(a.s.lay.claimKey(uk, p))
			n++
		}
	}
	return n, nil
}

// claimedRun reads the claims of positions [lo, hi) (registered) and
// returns the contiguous run of claimed positions that ends at hi-1
// (downwards, towards lo) or starts at lo (upwards).
func (a *attempt) claimedRun(uk string, lo, hi int64, down bool) ([2]int64, error) {
	claimed, err := a.claims(uk, lo, hi, true)
	if err != nil {
		return [2]int64{}, err
	}
	if down {
		p := hi
		for p > lo && claimed[p-1] {
			p--
		}
		return [2]int64{p, hi}, nil
	}
	p := lo
	for p < hi && claimed[p] {
		p++
	}
	return [2]int64{lo, p}, nil
}

// deleteMembers is the compact-deletes-members variant: at a folded count
// of zero it deletes every member row it sees.
func (a *attempt) deleteMembers(kind Kind, uk string) (int, error) {
	fam, span := a.s.lay.memberSpan(kind, uk)
	rows, err := a.scan(fam, uk, span, 0, false)
	for _, r := range rows {
		a.del(r.Key)
	}
	return len(rows), err
}
