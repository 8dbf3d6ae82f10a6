package coord

import "math"

// appendRunRecord appends the encoding of r to dst (unvalidated, as for
// AppendShardRecord).
func appendRunRecord(dst []byte, r *RunRecord) []byte {
	e := encoder{b: dst}
	e.header(tagRunRecord)
	e.raw(r.Tenant[:])
	e.u64(uint64(r.Run))
	e.u8(uint8(r.Status))
	e.u8(uint8(r.Config.Semantics))
	e.u64(uint64(r.Config.LeaseDuration))
	e.u32(r.Config.MaxShardRetries)
	e.u64(uint64(r.CreatedAt))
	e.flag(r.CompletedAt.Set)
	if r.CompletedAt.Set {
		e.u64(uint64(r.CompletedAt.Val))
	}
	e.u32(uint32(len(r.RootShards)))
	for _, id := range r.RootShards {
		e.u64(uint64(id))
	}
	e.opLog(&r.OpLog.r) // in place: no copy of the entries
	return e.b
}

// EncodeRunRecord returns the encoding of r.
func EncodeRunRecord(r *RunRecord) []byte {
	return appendRunRecord(make([]byte, 0, runRecordSize(r)), r)
}

// runRecordSize is the length of r's encoding, field by field as
// appendRunRecord writes them.
func runRecordSize(r *RunRecord) int {
	n := 2 + len(r.Tenant) + 8 + 1 // header, tenant, run, status
	n += 1 + 8 + 4 + 8             // semantics, lease duration, max retries, created at
	n += 1 + optSize(r.CompletedAt.Set, 8) + 4 + 8*len(r.RootShards)
	return n + opLogSize(&r.OpLog.r)
}

// decodeRunRecord decodes a run record and checks its invariants.
func decodeRunRecord(b []byte) (RunRecord, error) { return decodeRunRecordAs(b, true) }

// DecodeRunRecordUnchecked decodes a well-formed run record without
// checking its invariants.
func DecodeRunRecordUnchecked(b []byte) (RunRecord, error) { return decodeRunRecordAs(b, false) }

func decodeRunRecordAs(b []byte, check bool) (RunRecord, error) {
	d := decoder{b: b, record: "run record"}
	var r RunRecord
	d.header(tagRunRecord)
	r.Tenant = d.tenant()
	r.Run = RunID(d.u64("run id"))
	r.Status = RunStatus(d.discriminant("run status", func(v uint8) bool { return RunStatus(v).Valid() }))
	r.Config.Semantics = CursorSemantics(d.discriminant("cursor semantics", func(v uint8) bool { return CursorSemantics(v).Valid() }))
	r.Config.LeaseDuration = LogicalDuration(d.u64("lease duration"))
	r.Config.MaxShardRetries = d.u32("max shard retries")
	r.CreatedAt = LogicalTime(d.u64("created at"))
	if d.flag("completed at") {
		r.CompletedAt = Some(LogicalTime(d.u64("completed at")))
	}
	r.RootShards = d.shardIDs("root shards", math.MaxInt32)
	d.opLog(runOpLogCap, OpKind.RunKind, r.OpLog.Push)
	d.finish()
	if check && d.err == nil {
		d.invariant(r.AssertInvariants())
	}
	if d.err != nil {
		return RunRecord{}, d.err
	}
	return r, nil
}
