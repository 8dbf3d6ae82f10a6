package scenarios

import (
	"slices"

	"shardsim/checker/migratecheck"
	"shardsim/model/migrate"
	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/simclock"
)

// migrateRecorder keeps what the clients saw.
type migrateRecorder struct {
	ops    []migratecheck.KeyOp // per-key writes and latest reads, for porcupine
	acked  []migratecheck.AckedWrite
	reads  []migratecheck.ReadObs
	scans  []migratecheck.ScanObs
	latest []bool // per scan: at the latest timestamp
	spans  []scanTimes
	served []migratecheck.ServedRead
	txns   []migratecheck.TxnObs
	txnOps []txnRecord
	ranges []rangeRecord
	counts [numRecCounts]int64 // by recCount

	rowSlab []migratecheck.ServedRow // where point reads' served rows come from
	derived []migratecheck.KeyOp     // derivedHistory's room when ops has too little spare room
}

type scanTimes struct {
	client    int
	call, ret simclock.Time
}

// txnRecord is what history needs of a transaction: its id, the keys it
// wrote and which it deleted (not the whole fsm.Txn, about twice the size).
type txnRecord struct {
	client    int
	id        string
	keys      []string
	deletes   []bool
	call, ret simclock.Time
	outcome   migratecheck.TxnOutcome
}

type rangeRecord struct {
	client    int
	op        string
	call, ret simclock.Time
	ambiguous bool
}

// recCount names one of the recorder's counters.
type recCount int

// The recorder's counters, in recCountNames's order.
const (
	writesAcked recCount = iota
	writesAmbiguous
	writesFailed
	readsDone
	scansDone
	rangeDeletes
	txnsCommitted
	txnsAborted
	txnsUnknown
	numRecCounts
)

// recCountNames are the counters' names in a run's result.
var recCountNames = [numRecCounts]string{"writes_acked", "writes_ambiguous", "writes_failed", "reads", "scans",
	"range_deletes", "txns_committed", "txns_aborted", "txns_unknown"}

func newMigrateRecorder() *migrateRecorder { return &migrateRecorder{} }

func (r *migrateRecorder) write(client int, key, op string, del bool, call, ret simclock.Time, ts hlc.TS, err error) {
	o := migratecheck.KeyOp{Client: client, Key: key, Call: call, Return: ret, Write: true, Delete: del, Op: op}
	switch {
	case err == nil:
		r.acked = append(r.acked, migratecheck.AckedWrite{Op: op, Key: key, TS: ts, Return: ret})
		r.counts[writesAcked]++
	case errs.Ambiguous(err):
		o.Ambiguous = true
		r.counts[writesAmbiguous]++
	default:
		r.counts[writesFailed]++
		return // certainly not applied
	}
	r.ops = append(r.ops, o)
}

func (r *migrateRecorder) rangeDelete(client int, op string, call, ret simclock.Time, ts hlc.TS, err error) {
	switch {
	case err == nil:
		r.acked = append(r.acked, migratecheck.AckedWrite{Op: op, TS: ts, Return: ret})
		r.counts[rangeDeletes]++
	case errs.Ambiguous(err):
		r.counts[writesAmbiguous]++
	default:
		r.counts[writesFailed]++
		return
	}
	r.ranges = append(r.ranges, rangeRecord{client: client, op: op, call: call, ret: ret, ambiguous: err != nil})
}

// oneRow returns a one-row slice holding row, cut from a slab of rows (a
// point read's served row; one allocation for many reads). Its capacity is
// one, so an append copies.
func (r *migrateRecorder) oneRow(row migratecheck.ServedRow) []migratecheck.ServedRow {
	if len(r.rowSlab) == 0 {
		r.rowSlab = make([]migratecheck.ServedRow, 64)
	}
	out := r.rowSlab[:1:1]
	out[0] = row
	r.rowSlab = r.rowSlab[1:]
	return out
}

func (r *migrateRecorder) read(client int, op, key string, latest bool, call, ret simclock.Time, resp migrate.ReadResp) {
	r.reads = append(r.reads, migratecheck.ReadObs{Op: op, Key: key, TS: resp.TS, Found: resp.Read.Found, Version: resp.Read.Version})
	r.counts[readsDone]++
	rk := keys.RouteKey(key)
	r.served = append(r.served, migratecheck.ServedRead{Op: op, Group: resp.Group, Call: call, TS: resp.TS, Latest: latest,
		Key: key, Family: keys.Classify(key), Span: keys.Span{Start: rk, End: keys.KeyAfter(rk)},
		Rows: r.oneRow(migratecheck.ServedRow{Key: key, Chosen: resp.Read.Chosen, Visible: resp.Read.Found, TS: resp.Read.Version.TS})})
	if latest {
		r.ops = append(r.ops, migratecheck.KeyOp{Client: client, Key: key, Call: call, Return: ret,
			ReadTS: resp.TS, Found: resp.Read.Found, Value: resp.Read.Version.Value})
	}
}

func (r *migrateRecorder) scan(client int, op string, fam keys.Family, span keys.Span, latest bool, limit int, call, ret simclock.Time, resp migrate.ScanResp) {
	r.scans = append(r.scans, migratecheck.ScanObs{Op: op, Family: fam, Span: span, TS: resp.TS, Limit: limit, Rows: resp.Rows})
	r.latest = append(r.latest, latest)
	r.spans = append(r.spans, scanTimes{client, call, ret})
	r.counts[scansDone]++
	sr := migratecheck.ServedRead{Op: op, Group: resp.Group, Call: call, TS: resp.TS, Latest: latest, Family: fam, Span: span, Limit: limit}
	if n := len(resp.Rows); n > 0 {
		sr.Rows = make([]migratecheck.ServedRow, 0, n)
	}
	for _, row := range resp.Rows {
		sr.Rows = append(sr.Rows, migratecheck.ServedRow{Key: row.Key, Chosen: true, Visible: true, TS: row.TS})
	}
	r.served = append(r.served, sr)
}

// txn records a transaction's outcome: for the transaction checker, and,
// when it committed, its writes as acknowledged.
func (r *migrateRecorder) txn(client int, obs migratecheck.TxnObs, tx fsm.Txn, ts hlc.TS) {
	r.txns = append(r.txns, obs)
	r.txnOps = append(r.txnOps, txnRecord{client: client, id: tx.ID, keys: tx.Keys, deletes: tx.Deletes, call: obs.Call, ret: obs.Return, outcome: obs.Outcome})
	switch obs.Outcome {
	case migratecheck.TxnCommitted:
		r.counts[txnsCommitted]++
		for _, k := range tx.Keys {
			r.acked = append(r.acked, migratecheck.AckedWrite{Op: tx.ID, Key: k, TS: ts, Return: obs.Return})
		}
	case migratecheck.TxnAborted:
		r.counts[txnsAborted]++
	default:
		r.counts[txnsUnknown]++
	}
}

// history returns the per-key operations: writes and latest reads as
// recorded (r.ops), then those derivedHistory derives (a fresh list).
func (r *migrateRecorder) history(oracle *migratecheck.VersionOracle) []migratecheck.KeyOp {
	return slices.Concat(r.ops, r.derivedHistory(oracle))
}

// derivedHistory returns the operations history adds to the recorded
// ones: each latest scan as one read per key it covered (among keys the
// oracle knows), and each transaction and range delete as one write per
// key it wrote (the oracle says which a range delete deleted; an
// ambiguous one that never applied is dropped). The list is made in the
// spare room of r.ops (which keeps its length) when it fits there (the
// world reserves room for about one operation per client call), else in
// room of the recorder's made to fit (counted first): no copy of the
// recorded operations is made (migratecheck.CheckLinearizableSplit judges
// both lists). It is valid until the next call, which rebuilds the same in
// the same room.
func (r *migrateRecorder) derivedHistory(oracle *migratecheck.VersionOracle) []migratecheck.KeyOp {
	n := r.derivedOps(oracle)
	out := r.ops[len(r.ops):]
	if cap(out) < n {
		r.derived = slices.Grow(r.derived[:0], n)
		out = r.derived
	}
	for i, s := range r.scans {
		if r.latest[i] {
			out = oracle.AppendScanReads(out, s, r.spans[i].client, r.spans[i].call, r.spans[i].ret)
		}
	}
	for _, t := range r.txnOps {
		if t.outcome == migratecheck.TxnAborted {
			continue
		}
		for i, k := range t.keys {
			out = append(out, migratecheck.KeyOp{Client: t.client, Key: k, Call: t.call, Return: t.ret, Write: true,
				Delete: t.deletes[i], Op: t.id, Ambiguous: t.outcome == migratecheck.TxnUnknown})
		}
	}
	for _, d := range r.ranges {
		for _, w := range oracle.OpWrites(d.op) {
			out = append(out, migratecheck.KeyOp{Client: d.client, Key: w.Key, Call: d.call, Return: d.ret, Write: true,
				Delete: true, Op: d.op, Ambiguous: d.ambiguous})
		}
	}
	return out
}

// derivedOps counts the operations history adds to the recorded ones:
// latest scans' reads, transactions' and range deletes' writes.
func (r *migrateRecorder) derivedOps(oracle *migratecheck.VersionOracle) int {
	n := 0
	for i, s := range r.scans {
		if r.latest[i] {
			n += oracle.ScanReadCount(s)
		}
	}
	for _, t := range r.txnOps {
		if t.outcome != migratecheck.TxnAborted {
			n += len(t.keys)
		}
	}
	for _, d := range r.ranges {
		n += len(oracle.OpWrites(d.op))
	}
	return n
}
