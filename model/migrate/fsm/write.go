package fsm

import (
	"sort"

	"shardsim/model/bugs"
	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

// admit is the apply-time check every write-like step makes for one user
// or internal raw key at commit ts: above the durable floor of any moved
// span it lies in, not under a lock, and above every existing version (a
// timestamp a client supplied may not rewrite history). It is replicated
// state only, so every voter decides alike.
func (f *FSM) admit(raw string, ts hlc.TS, staging uint64, lockOwner string) error {
	if ts <= f.CompactedTS {
		return errs.ErrWriteTooOld // below the compaction watermark, history is gone
	}
	if len(f.floors) > 0 { // the route key only when there is a floor to test (most writes meet none)
		rk := keys.RouteKey(raw)
		for _, g := range f.floors {
			if g.Span.Contains(rk) && ts <= g.TS && !f.bugs.Has(bugs.MigrateNoHLCAdvance) {
				return errs.ErrBelowFloor
			}
		}
	}
	if keys.Classify(raw) == keys.FamilyUser {
		if l, ok := f.lock(raw); ok && l.txn != lockOwner {
			return errs.ErrLocked
		}
	}
	if v, ok := f.newest(raw, staging); ok && v.TS >= ts {
		return errs.ErrWriteTooOld
	}
	return nil
}

// newest returns raw's newest version, live or (with a staging job) staged.
func (f *FSM) newest(raw string, staging uint64) (mvcc.Version, bool) {
	vs := f.Store.Versions(raw)
	var v mvcc.Version
	ok := len(vs) > 0
	if ok {
		v = vs[0]
	}
	if staging != 0 {
		if ss := f.Store.StagedVersions(staging, raw); len(ss) > 0 && (!ok || ss[0].TS > v.TS) {
			v, ok = ss[0], true
		}
	}
	return v, ok
}

func (f *FSM) applyWrite(w *Write, d *Decision) Result {
	if !d.made {
		d.err = f.admit(w.Key, w.TS, w.Staging, "")
	}
	if d.err != nil {
		return Result{Err: d.err}
	}
	v := mvcc.Version{TS: w.TS, Value: w.Value, Tombstone: w.Tombstone}
	if w.TTLms > 0 && !w.Tombstone {
		v.ExpireAt = w.TS + hlc.TS(w.TTLms<<hlc.LogicalBits)
	}
	f.Store.Put(w.Key, v)
	f.committed(w.TS)
	f.track(w.Key, w.TS)
	w.put[0] = mvcc.Row{Key: w.Key, Version: v}
	return Result{TS: w.TS, Puts: w.put[:]} // capacity one: a holder's append copies
}

// applyDeleteRange tombstones, atomically, every user key of the span that
// is visible just below TS; any key that refuses the write fails it all.
func (f *FSM) applyDeleteRange(d *DeleteRange) Result {
	var victims []string
	st := staging(d.Staging)
	cands := f.Store.KeysIn(d.Span.Start, d.Span.End)
	if d.Staging != 0 {
		p := keys.StagePrefix(d.Staging)
		end := keys.PrefixEnd(p)
		if d.Span.End != "" {
			end = p + d.Span.End
		}
		for _, k := range f.Store.KeysIn(p+d.Span.Start, end) {
			cands = append(cands, k[len(p):])
		}
	}
	seen := map[string]bool{}
	for _, k := range cands {
		if seen[k] || keys.Classify(k) != keys.FamilyUser || !d.Span.Contains(k) {
			continue
		}
		seen[k] = true
		if r := f.Store.Get(k, d.TS-1, st, mvcc.MergeNewest); r.Found {
			victims = append(victims, k)
		}
	}
	sortStrings(victims)
	for _, k := range victims {
		if err := f.admit(k, d.TS, d.Staging, ""); err != nil {
			return Result{Err: err}
		}
	}
	var puts []mvcc.Row
	for _, k := range victims {
		v := mvcc.Version{TS: d.TS, Tombstone: true}
		f.Store.Put(k, v)
		f.track(k, d.TS)
		puts = append(puts, mvcc.Row{Key: k, Version: v})
	}
	if len(victims) > 0 {
		f.committed(d.TS)
	}
	return Result{TS: d.TS, Applied: len(victims), Puts: puts}
}

// applyFloor makes a target's write floor durable and raises the clock's
// durable bound to it, so no later leader issues a ts at or below it.
func (f *FSM) applyFloor(g Guard) {
	for i := range f.floors {
		if f.floors[i].Job == g.Job {
			if g.TS > f.floors[i].TS {
				f.floors[i].TS = g.TS
			}
			g = f.floors[i]
			goto raise
		}
	}
	f.floors = append(f.floors, g)
raise:
	if !f.bugs.Has(bugs.MigrateNoHLCAdvance) {
		f.observe(g.TS)
	}
}

// HasFloor reports whether job's floor is durable here at or above ts.
func (f *FSM) HasFloor(job uint64, ts hlc.TS) bool {
	for _, g := range f.floors {
		if g.Job == job && g.TS >= ts {
			return true
		}
	}
	return false
}

// armTracker starts job's tracker over its span, seeded with the commit
// timestamps of the transactions already prepared there (their versions
// appear later at those timestamps), and pins the span's retention at 0
// (nothing is compacted until the pin moves).
func (f *FSM) armTracker(g Guard) Result {
	for _, t := range f.trackers {
		if t.Job == g.Job {
			return Result{Duplicate: true, Compacted: f.CompactedTS, Tracked: t.min}
		}
	}
	t := tracker{Guard: g}
	f.eachLock(g.Span, func(_ string, l lockInfo) {
		if f.bugs.Has(bugs.MigrateFloorPrimariesOnly) && !g.Span.Contains(keys.RouteKey(l.primary)) {
			return
		}
		if t.min == 0 || l.commit < t.min {
			t.min = l.commit
		}
	})
	f.trackers = append(f.trackers, t)
	if !f.bugs.Has(bugs.MigrateNoRetentionPin) {
		f.pins = upsert(f.pins, Guard{Job: g.Job, Span: g.Span})
	}
	return Result{Compacted: f.CompactedTS, Tracked: t.min}
}

// track lowers every armed tracker whose span holds raw's route key to ts.
func (f *FSM) track(raw string, ts hlc.TS) {
	if len(f.trackers) == 0 {
		return // no route key to build (no tracker armed, as mostly)
	}
	rk := keys.RouteKey(raw)
	for i := range f.trackers {
		t := &f.trackers[i]
		if t.Span.Contains(rk) && (t.min == 0 || ts < t.min) {
			t.min = ts
		}
	}
}

// TrackedMin returns job's tracked minimum (0: none admitted, or no tracker).
func (f *FSM) TrackedMin(job uint64) hlc.TS {
	for _, t := range f.trackers {
		if t.Job == job {
			return t.min
		}
	}
	return 0
}

// Tracking reports whether job's tracker is armed here.
func (f *FSM) Tracking(job uint64) bool {
	for _, t := range f.trackers {
		if t.Job == job {
			return true
		}
	}
	return false
}

// movePin moves job's retention pin (only while it exists).
func (f *FSM) movePin(g Guard) {
	for i := range f.pins {
		if f.pins[i].Job == g.Job {
			f.pins[i].TS = g.TS
		}
	}
}

// Pin returns job's retention pin, if any.
func (f *FSM) Pin(job uint64) (Guard, bool) {
	for _, p := range f.pins {
		if p.Job == job {
			return p, true
		}
	}
	return Guard{}, false
}

// release drops job's tracker and retention pin.
func (f *FSM) release(job uint64) {
	for i := 0; i < len(f.trackers); i++ {
		if f.trackers[i].Job == job {
			f.trackers = append(f.trackers[:i], f.trackers[i+1:]...)
			i--
		}
	}
	f.pins = drop(f.pins, job)
}

// compact drops, for every live key (not staged rows, not lock rows), the
// versions older than its newest version at or below the effective
// compaction timestamp; that version stays even when it hides nothing (a
// tombstone, or expired): dropping it could uncover an older staged
// version of a moved route. A retention pin caps the effective timestamp
// for keys of its span at the pin. Reads below ts are refused from now on.
// Where each key is trimmed is d's (see compactionCuts).
func (f *FSM) compact(ts hlc.TS, d *Decision) Result {
	if ts <= f.CompactedTS {
		return Result{}
	}
	f.CompactedTS = ts
	if !d.made {
		d.cuts = f.compactionCuts(ts, d.cuts[:0])
	}
	n := 0
	for _, x := range d.cuts {
		n += f.Store.DeleteBelow(x.key, x.at)
	}
	return Result{Applied: n}
}

// compactionCuts appends to cuts where a compaction at ts trims each key
// that has history to trim, in key order.
func (f *FSM) compactionCuts(ts hlc.TS, cuts []cut) []cut {
	// A key with one version has nothing older than its newest to drop.
	f.Store.EachWithHistory(func(k string, vs []mvcc.Version) {
		fam := keys.Classify(k)
		if fam == keys.FamilyLocal || fam == keys.FamilyTxnLock {
			return
		}
		c := ts
		for _, p := range f.pins {
			if p.Span.Contains(keys.RouteKey(k)) && p.TS < c {
				c = p.TS
			}
		}
		for i, v := range vs {
			if v.TS <= c {
				if i+1 < len(vs) {
					cuts = append(cuts, cut{key: k, at: v.TS})
				}
				break
			}
		}
	})
	return cuts
}

func sortStrings(s []string) { sort.Strings(s) }
