package migrate

import (
	"fmt"

	"shardsim/model/bugs"
	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/job"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

// copyBatch copies one chunk of the first unfinished bracket of the
// current pass: export (low, high] after the bracket's cursor from the
// source, import it into the target's staged keyspace as batch seq+1, and
// record the new cursor on the job. A retry after any failure exports the
// same rows again (nothing in (low, high] of the moving span changes while
// the pass runs) with the same seq, which the target deduplicates.
func (m *migrator) copyBatch(j job.SplitJob, rev int64, low, high hlc.TS) (job.SplitJob, int64, error) {
	i := 0
	for i < len(j.Brackets) && j.Brackets[i].Done {
		i++
	}
	b := &j.Brackets[i]
	moving := j.Moving()
	if m.bugs.Has(bugs.MigrateRawRangeExport) && b.Family != keys.FamilyUser {
		// The wrong variant exports the raw [start, end) once and has no
		// per-family brackets.
		b.Done = true
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
	next := chunk.Next.Encode()
	seq := b.Seq
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
			next, seq = resp.Cursor, resp.Seq
		}
	}
	b.Cursor, b.Seq, b.Done = next, seq, chunk.Done
	if max > j.MaxImportedTS {
		j.MaxImportedTS = max
	}
	m.log("mig.copy", fmt.Sprintf("j%d pass=%d %s seq=%d rows=%d scanned=%d done=%v", j.ID, j.Pass, b.Family, seq, len(chunk.Rows), chunk.Scanned, chunk.Done))
	return m.transition(j, rev, j.Phase, nil, 0, nil)
}
