package mvcc

import (
	"slices"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
)

// ReadMode selects how a read combines staged and live versions. Only
// MergeNewest is right; StagedFirst is kept for bug injection.
type ReadMode int

const (
	// MergeNewest takes the newest live and the newest staged version at or
	// below the read timestamp and returns the one with the greater commit
	// timestamp; visibility (tombstone, TTL) is applied after the choice.
	MergeNewest ReadMode = iota
	// StagedFirst returns the staged version when there is one and falls
	// back to live data: an older staged version shadows a newer live one.
	StagedFirst
)

// Staging says whether, and from which job, a read merges staged rows.
type Staging struct {
	Active bool
	Job    uint64
}

// StagingOf returns the staging of job (active iff on).
func StagingOf(on bool, job uint64) Staging {
	if !on {
		return Staging{}
	}
	return Staging{Active: true, Job: job}
}

// Read is the result of a point read.
type Read struct {
	Found   bool    // a visible value
	Version Version // the chosen version (zero if none)
	Chosen  bool    // some version, maybe a tombstone or expired, was chosen
}

// Get reads raw key at ts, merging the job's staged rows when staging is
// active.
func (s *Store) Get(raw string, ts hlc.TS, st Staging, mode ReadMode) Read {
	return s.View(raw, st).Get(ts, mode)
}

// KeyView is everything a point read of one key reads: the key's versions
// and, with staging active, its staged twin's, with their generations
// (Gen): while both are unchanged, Get answers as before at every
// timestamp. It shares the store's slices, so it is valid until the store
// changes.
type KeyView struct {
	live, staged       []Version
	LiveGen, StagedGen uint64
	stagingOn          bool
}

// View returns what a read of raw under st reads.
func (s *Store) View(raw string, st Staging) KeyView {
	v := KeyView{stagingOn: st.Active}
	if kv := s.vers[raw]; kv != nil {
		v.live, v.LiveGen = kv.vs, kv.gen
	}
	if st.Active {
		if kv := s.stagedRecord(st.Job, raw); kv != nil {
			v.staged, v.StagedGen = kv.vs, kv.gen
		}
	}
	return v
}

// Probe is a KeyView that can tell, without looking the key up again,
// whether it is still what a View of the same key and staging on the same
// store would return (Store.Current): it holds the records the view read
// and the store's count of added keys at the time. A reader that asks
// about the same keys again and again (M.NoLostWrite's passes) probes each
// once and afterwards only checks.
type Probe struct {
	View         KeyView
	store        *Store       // the store probed: Current answers only for it
	live, staged *keyVersions // the records read (nil: the store held none)
	added        uint64       // the store's count of added keys when probed
}

// Probe returns View(raw, st) with what Current needs.
func (s *Store) Probe(raw string, st Staging) Probe {
	p := Probe{View: KeyView{stagingOn: st.Active}, store: s, added: s.added}
	if kv := s.vers[raw]; kv != nil {
		p.live, p.View.live, p.View.LiveGen = kv, kv.vs, kv.gen
	}
	if st.Active {
		if kv := s.stagedRecord(st.Job, raw); kv != nil {
			p.staged, p.View.staged, p.View.StagedGen = kv, kv.vs, kv.gen
		}
	}
	return p
}

// Current reports whether p, a Probe of this store, still reads as a new
// Probe of the same key and staging would: same records at the same
// generations, and no key added where p found none. Why that suffices: a
// record's generation changes with every edit of its versions and when its
// key is dropped (so a record that moves on to another key changed too),
// and a key the store did not hold can only appear by being added. The
// view's slices are then still the store's. A probe of another store (a
// Clone included) or the zero Probe is never current.
func (s *Store) Current(p *Probe) bool {
	return p.store == s && recordCurrent(p.live, p.View.LiveGen, p.added, s.added) &&
		(!p.View.stagingOn || recordCurrent(p.staged, p.View.StagedGen, p.added, s.added))
}

// recordCurrent reports whether record kv, read at generation gen when the
// store had added `then` keys, is unchanged now that it has added `now`:
// kv's generation is the same, or there was no record and no key was added
// since.
func recordCurrent(kv *keyVersions, gen, then, now uint64) bool {
	if kv == nil {
		return then == now
	}
	return kv.gen == gen
}

// Same reports whether o holds the same versions as kv, staging on or off
// alike: then Get answers the same for both at every timestamp.
func (kv KeyView) Same(o KeyView) bool {
	return kv.stagingOn == o.stagingOn && slices.Equal(kv.live, o.live) && slices.Equal(kv.staged, o.staged)
}

// Get reads the key at ts: the newest live and the newest staged version at
// or below ts, merged by mode.
func (kv KeyView) Get(ts hlc.TS, mode ReadMode) Read {
	live, lok := newestIn(kv.live, ts)
	v, ok := live, lok
	if kv.stagingOn {
		staged, sok := newestIn(kv.staged, ts)
		switch {
		case !sok:
		case mode == StagedFirst:
			v, ok = staged, true
		case !lok || staged.TS > live.TS:
			v, ok = staged, true
		}
	}
	if !ok {
		return Read{}
	}
	return Read{Found: v.VisibleAt(ts), Version: v, Chosen: true}
}

// ScanRow is one visible row of a scan.
type ScanRow struct {
	Key string
	Version
}

// Scan returns the visible rows of bracket family f among raw keys in raw
// whose route key lies in span, read at ts with the same merge as Get, in
// raw key order, at most limit rows (0: no limit).
func (s *Store) Scan(f keys.Family, raw keys.Span, span keys.Span, ts hlc.TS, st Staging, mode ReadMode, limit int) []ScanRow {
	if !st.Active {
		return s.scanLive(keys.Bracket{Family: f, Raw: raw}, span, ts, mode, limit)
	}
	var cands []string
	s.Ascend(raw.Start, raw.End, func(k string, _ []Version) bool {
		cands = append(cands, k)
		return true
	})
	p := keys.StagePrefix(st.Job)
	end := keys.PrefixEnd(p)
	if raw.End != "" {
		end = p + raw.End
	}
	var staged []string
	s.Ascend(p+raw.Start, end, func(k string, _ []Version) bool {
		staged = append(staged, k[len(p):])
		return true
	})
	cands = mergeSorted(cands, staged)
	b := keys.Bracket{Family: f, Raw: raw}
	var out []ScanRow
	for _, k := range cands {
		if !keys.InBracket(k, b, span) {
			continue
		}
		r := s.Get(k, ts, st, mode)
		if !r.Found {
			continue
		}
		out = append(out, ScanRow{Key: k, Version: r.Version})
		if limit > 0 && len(out) >= limit {
			break
		}
	}
	return out
}

// scanLive is Scan without staged rows: each key is read from the versions
// the ordered walk hands over (no candidate list, no lookup per key), and
// the walk stops at the limit.
func (s *Store) scanLive(b keys.Bracket, span keys.Span, ts hlc.TS, mode ReadMode, limit int) []ScanRow {
	var out []ScanRow
	s.Ascend(b.Raw.Start, b.Raw.End, func(k string, vs []Version) bool {
		if !keys.InBracket(k, b, span) {
			return true
		}
		if r := (KeyView{live: vs}).Get(ts, mode); r.Found {
			out = append(out, ScanRow{Key: k, Version: r.Version})
		}
		return limit <= 0 || len(out) < limit
	})
	return out
}

// mergeSorted merges two sorted key lists, dropping duplicates.
func mergeSorted(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	out := make([]string, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j >= len(b) || (i < len(a) && a[i] < b[j]):
			out = append(out, a[i])
			i++
		case i >= len(a) || b[j] < a[i]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i, j = i+1, j+1
		}
	}
	return out
}
