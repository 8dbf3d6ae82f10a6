package coord

// AppendShardRecord appends the encoding of r (EncodeShardRecord's bytes)
// to dst. It does not validate r: backends check invariants before they
// write, and a buggy variant may need to persist exactly the wrong state it
// produced.
func AppendShardRecord(dst []byte, r *ShardRecord) []byte {
	e := encoder{b: dst}
	e.header(tagShardRecord)
	e.raw(r.Tenant[:])
	e.u64(uint64(r.Run))
	e.u64(uint64(r.Shard))
	e.u8(uint8(r.Status))
	e.flag(r.ParkReason.Set)
	if r.ParkReason.Set {
		e.u8(uint8(r.ParkReason.Val))
	}
	e.flag(r.Lease.Set)
	if r.Lease.Set {
		e.u64(uint64(r.Lease.Val.Owner))
		e.u64(uint64(r.Lease.Val.Deadline))
	}
	e.u64(uint64(r.Fence))
	e.u32(r.AcquireCount)
	e.cursor(r.Cursor)
	e.u8(uint8(r.Semantics))
	e.spec(r.Spec)
	e.flag(r.Parent.Set)
	if r.Parent.Set {
		e.u64(uint64(r.Parent.Val))
	}
	e.u32(uint32(len(r.Spawned)))
	for _, id := range r.Spawned {
		e.u64(uint64(id))
	}
	e.opLog(&r.OpLog.r) // in place: no copy of the entries
	return e.b
}

// EncodeShardRecord returns the encoding of r.
func EncodeShardRecord(r *ShardRecord) []byte {
	return AppendShardRecord(make([]byte, 0, shardRecordSize(r)), r)
}

// shardRecordSize is the length of r's encoding, field by field as
// AppendShardRecord writes them, so an encoding is made in one allocation.
func shardRecordSize(r *ShardRecord) int {
	n := 2 + len(r.Tenant) + 8 + 8 + 1 // header, tenant, run, shard, status
	n += 1 + optSize(r.ParkReason.Set, 1) + 1 + optSize(r.Lease.Set, 8+8)
	n += 8 + 4 // fence, acquire count
	n += 4 + len(r.Cursor.LastKey) + 4 + len(r.Cursor.Token) + 1
	n += 4 + len(r.Spec.Start) + 4 + len(r.Spec.End) + 4 + len(r.Spec.Metadata)
	n += 1 + optSize(r.Parent.Set, 8) + 4 + 8*len(r.Spawned)
	return n + opLogSize(&r.OpLog.r)
}

// decodeShardRecord decodes a shard record and checks its invariants.
func decodeShardRecord(b []byte) (ShardRecord, error) { return decodeShardRecordAs(b, true) }

// DecodeShardRecordUnchecked decodes a well-formed shard record without
// checking its invariants (for inspecting state written under a bug that
// breaks them).
func DecodeShardRecordUnchecked(b []byte) (ShardRecord, error) { return decodeShardRecordAs(b, false) }

func decodeShardRecordAs(b []byte, check bool) (ShardRecord, error) {
	d := decoder{b: b, record: "shard record"}
	var r ShardRecord
	d.header(tagShardRecord)
	r.Tenant = d.tenant()
	r.Run = RunID(d.u64("run id"))
	r.Shard = ShardID(d.u64("shard id"))
	r.Status = ShardStatus(d.discriminant("shard status", func(v uint8) bool { return ShardStatus(v).Valid() }))
	if d.flag("park reason") {
		r.ParkReason = Some(ParkReason(d.discriminant("park reason", func(v uint8) bool { return ParkReason(v).Valid() })))
	}
	if d.flag("lease") {
		r.Lease = Some(LeaseHolder{Owner: WorkerID(d.u64("lease owner")), Deadline: LogicalTime(d.u64("lease deadline"))})
	}
	r.Fence = FenceEpoch(d.u64("fence"))
	r.AcquireCount = d.u32("acquire count")
	r.Cursor = d.cursor()
	r.Semantics = CursorSemantics(d.discriminant("cursor semantics", func(v uint8) bool { return CursorSemantics(v).Valid() }))
	r.Spec = d.spec("spec")
	if d.flag("parent") {
		r.Parent = Some(ShardID(d.u64("parent id")))
	}
	r.Spawned = d.shardIDs("spawned", maxSpawnedPerShard)
	d.opLog(shardOpLogCap, OpKind.ShardKind, r.OpLog.Push)
	d.finish()
	if check && d.err == nil {
		d.invariant(r.AssertInvariants())
	}
	if d.err != nil {
		return ShardRecord{}, d.err
	}
	return r, nil
}
