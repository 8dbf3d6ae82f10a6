package migrate

import (
	"fmt"
	"strconv"

	"shardsim/model/bugs"
	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/job"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

// lockFamily is the transaction lock family: drained, never exported (a
// wrong variant exports it).
const lockFamily = keys.FamilyTxnLock

// appendCopyLine appends the text of a mig.copy record: "j<id> pass=<pass>
// <family> seq=<seq> rows=<rows> scanned=<scanned> done=<done>".
func appendCopyLine(b []byte, id uint64, pass uint8, f keys.Family, seq uint64, rows, scanned int, done bool) []byte {
	b = strconv.AppendUint(append(b, 'j'), id, 10)
	b = strconv.AppendUint(append(b, " pass="...), uint64(pass), 10)
	b = append(append(b, ' '), f.String()...)
	b = strconv.AppendUint(append(b, " seq="...), seq, 10)
	b = strconv.AppendInt(append(b, " rows="...), int64(rows), 10)
	b = strconv.AppendInt(append(b, " scanned="...), int64(scanned), 10)
	return strconv.AppendBool(append(b, " done="...), done)
}

// copyBatch copies one chunk of the first unfinished bracket of the
// current pass: export (low, high] after the bracket's cursor from the
// source, import it into the target's staged keyspace as batch seq+1, and
// record the new cursor on the job. A retry after a failure exports from
// the same cursor with the same seq: the versions in (low, high] it finds
// are the same (none is added or removed while the pass runs), but the
// chunk may end elsewhere, so when the target answers that the seq is
// already stored, the migrator drops its chunk and continues from the
// cursor the target stored with it.
func (m *migrator) copyBatch(j job.SplitJob, rev int64, low, high hlc.TS) (job.SplitJob, int64, error) {
	i := 0
	for i < len(j.Brackets) && j.Brackets[i].Done {
		i++
	}
	b := j.Brackets[i]
	moving := j.Moving()
	if m.bugs.Has(bugs.MigrateRawRangeExport) && b.Family != keys.FamilyUser {
		// The wrong variant exports the raw [start, end) once and has no
		// per-family brackets.
		b.Done = true
		j.SetBracket(i, b)
		return m.transition(j, rev, j.Phase, nil, 0, nil)
	}
	after, err := mvcc.DecodeCursor(b.Cursor)
	if err != nil {
		return j, rev, err
	}
	r, err := m.call(j.SourceGroup, ExportReq{Export: mvcc.ExportRequest{
		Bracket: keys.BracketFor(b.Family, moving), Span: moving, Low: low, High: high,
		After: after, MaxRows: m.cfg.ExportRows, Budget: m.cfg.ExportBudget,
	}})
	if err != nil {
		return j, rev, err
	}
	chunk := r.(ExportResp).Result
	var max hlc.TS
	for _, row := range chunk.Rows {
		if !moving.Contains(keys.RouteKey(row.Key)) {
			return j, rev, fmt.Errorf("%w: %q", errs.ErrForeignRow, row.Key)
		}
		if row.TS > max {
			max = row.TS
		}
	}
	next, seq, done := chunk.Next.Encode(), b.Seq, chunk.Done
	if len(chunk.Rows) > 0 {
		seq++
		ir, err := m.call(j.TargetGroup, ImportReq{
			Job: j.ID, Bracket: job.BracketID(j.Pass, b.Family), Seq: seq,
			Rows: chunk.Rows, Cursor: next, Moving: moving,
		})
		if err != nil {
			return j, rev, err
		}
		if resp := ir.(ImportResp); resp.Duplicate {
			// An earlier attempt's batch seq landed but its job update did
			// not. Its chunk may have ended elsewhere (the scan budget also
			// counts versions above the copy window, which keep arriving),
			// so the stored cursor is the truth and this chunk is dropped.
			next, seq, done, max = resp.Cursor, resp.Seq, false, 0
		}
	}
	b.Cursor, b.Seq, b.Done = next, seq, done
	j.SetBracket(i, b)
	if max > j.MaxImportedTS {
		j.MaxImportedTS = max
	}
	var line [128]byte
	m.log("mig.copy", appendCopyLine(line[:0], j.ID, j.Pass, b.Family, seq, len(chunk.Rows), chunk.Scanned, chunk.Done))
	return m.transition(j, rev, j.Phase, nil, 0, nil)
}
