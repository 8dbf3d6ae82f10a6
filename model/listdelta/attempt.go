package listdelta

import (
	"errors"
	"sort"

	"shardsim/model/bugs"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

// attempt is one try of a command: reads at one snapshot (the timestamp the
// first read was served at), the read set the command relies on, and the
// writes it will commit.
type attempt struct {
	s       *Store
	ts      hlc.TS
	reads   []fsm.Read
	keys    []string
	values  []string
	deletes []bool
	stamps  []fsm.Stamp
	deltas  uint32
	primary string
}

// at returns the snapshot to read at (0 before the first read: the latest).
func (a *attempt) at() hlc.TS { return a.ts }

func (a *attempt) served(ts hlc.TS) {
	if a.ts == 0 {
		a.ts = ts
	}
}

// pending returns what the attempt itself wrote at raw, if anything: a
// command of a MULTI/EXEC reads the writes of the commands before it.
func (a *attempt) pending(raw string) (mvcc.Read, bool) {
	for i, k := range a.keys {
		if k == raw {
			if a.deletes[i] {
				return mvcc.Read{Chosen: true}, true
			}
			return mvcc.Read{Found: true, Chosen: true, Version: mvcc.Version{Value: a.values[i]}}, true
		}
	}
	return mvcc.Read{}, false
}

// overlay merges the attempt's own writes in raw into rows read from the
// backend.
func (a *attempt) overlay(rows []mvcc.ScanRow, raw keys.Span) []mvcc.ScanRow {
	mine := map[string]int{}
	for i, k := range a.keys {
		if raw.Contains(k) {
			mine[k] = i
		}
	}
	if len(mine) == 0 {
		return rows
	}
	var out []mvcc.ScanRow
	for _, r := range rows {
		if _, ok := mine[r.Key]; !ok {
			out = append(out, r)
		}
	}
	for i, k := range a.keys {
		if _, ok := mine[k]; ok && !a.deletes[i] {
			out = append(out, mvcc.ScanRow{Key: k, Version: mvcc.Version{Value: a.values[i]}})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// get reads raw at the snapshot (the attempt's own write of it first);
// with register it joins the read set.
func (a *attempt) get(raw string, register bool) (mvcc.Read, error) {
	if r, ok := a.pending(raw); ok {
		return r, nil
	}
	r, ts, err := a.s.be.Get(raw, a.at())
	if err != nil {
		return mvcc.Read{}, err
	}
	a.served(ts)
	if register {
		a.reads = append(a.reads, fsm.Read{Start: raw})
	}
	return r, nil
}

// getLatest reads raw at the latest timestamp, whatever the snapshot (the
// torn-snapshot variant's item reads).
func (a *attempt) getLatest(raw string) (mvcc.Read, error) {
	r, ts, err := a.s.be.Get(raw, 0)
	a.served(ts)
	return r, err
}

// scan reads uk's rows of family fam in raw at the snapshot, at most limit
// (0: all); with register the range joins the read set. The route key the
// scan is routed by is the one the store reads in the range's first key
// (uk itself, but for a NUL-separated row the key up to the NUL).
func (a *attempt) scan(fam keys.Family, uk string, raw keys.Span, limit int, register bool) ([]mvcc.ScanRow, error) {
	rows, ts, err := a.s.be.Scan(fam, keys.RouteKey(raw.Start), raw, a.at(), limit)
	if err != nil {
		return nil, err
	}
	a.served(ts)
	if register {
		a.reads = append(a.reads, fsm.Read{Start: raw.Start, End: raw.End})
	}
	return a.overlay(rows, raw), nil
}

// scanLatest is scan at the latest timestamp, unregistered; it also
// returns the timestamp it was served at.
func (a *attempt) scanLatest(fam keys.Family, uk string, raw keys.Span) ([]mvcc.ScanRow, hlc.TS, error) {
	rows, ts, err := a.s.be.Scan(fam, keys.RouteKey(raw.Start), raw, 0, 0)
	a.served(ts)
	return rows, ts, err
}

// register adds reads to the read set without reading (the command relies
// on a key staying as the snapshot has it, e.g. absent).
func (a *attempt) register(raw ...string) {
	for _, k := range raw {
		a.reads = append(a.reads, fsm.Read{Start: k})
	}
}

// put writes value at raw; a later write of the same key replaces it.
func (a *attempt) put(raw, value string) { a.write(raw, value, false) }

// del deletes raw.
func (a *attempt) del(raw string) { a.write(raw, "", true) }

func (a *attempt) write(raw, value string, del bool) {
	for i, k := range a.keys {
		if k == raw {
			a.values[i], a.deletes[i] = value, del
			return
		}
	}
	a.keys = append(a.keys, raw)
	a.values = append(a.values, value)
	a.deletes = append(a.deletes, del)
}

// putDelta appends a delta row of uk: its key carries the commit timestamp
// (a slot the leader fills: unique per transaction and group, seed 001
// round 5) and the delta's number in the transaction (several commands of
// one MULTI/EXEC on one key).
func (a *attempt) putDelta(kind Kind, uk string, d Meta) {
	seq := a.deltas
	a.deltas++
	if a.s.bugs.Has(bugs.ListdeltaSharedCommitTS) {
		// The wrong variant stamps the key with the writer's own clock:
		// two writers reading the same clock write the same delta key.
		k, _ := a.s.lay.deltaKey(kind, uk, a.s.be.Now(), seq)
		a.put(k, encodeMeta(d))
		return
	}
	k, off := a.s.lay.deltaKey(kind, uk, 0, seq)
	a.put(k, encodeMeta(d))
	a.stamps = append(a.stamps, fsm.Stamp{Key: len(a.keys) - 1, Offset: off})
}

// commit sends the attempt's writes and read set as one transaction read at
// the snapshot; its primary (the route key its records live under) is the
// collection's key.
func (a *attempt) commit() (hlc.TS, error) {
	if a.primary == "" {
		return 0, errors.New("listdelta: transaction without a collection")
	}
	tx := fsm.Txn{ID: a.s.txnID(), Primary: a.primary, Keys: a.keys, Values: a.values, Deletes: a.deletes,
		ReadTS: a.ts, Reads: a.reads, Stamps: a.stamps}
	if a.s.OnAttempt != nil {
		a.s.OnAttempt(tx.ID)
	}
	return a.s.be.Commit(tx)
}

// readOf is a read-set entry for a raw range.
func readOf(s keys.Span) fsm.Read { return fsm.Read{Start: s.Start, End: s.End} }
