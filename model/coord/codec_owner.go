package coord

// OwnerBinding is the persisted record of who holds a shard's lease, kept
// by a backend beside the shard record (the etcd backend stores it under a
// storage lease so storage liveness and the logical deadline are checked
// together).
type OwnerBinding struct {
	Worker   WorkerID
	Fence    FenceEpoch
	Deadline LogicalTime
}

// AssertInvariants checks that the binding's fence is a real epoch.
func (o *OwnerBinding) AssertInvariants() error {
	if o.Fence < InitialFence {
		return invariantf("owner binding fence %d below the initial epoch", o.Fence)
	}
	return nil
}

// appendOwnerBinding appends the encoding of o to dst.
func appendOwnerBinding(dst []byte, o *OwnerBinding) []byte {
	e := encoder{b: dst}
	e.header(tagOwnerBinding)
	e.u64(uint64(o.Worker))
	e.u64(uint64(o.Fence))
	e.u64(uint64(o.Deadline))
	return e.b
}

// EncodeOwnerBinding returns the encoding of o.
func EncodeOwnerBinding(o *OwnerBinding) []byte { return appendOwnerBinding(nil, o) }

// DecodeOwnerBinding decodes an owner binding and checks its invariants.
func DecodeOwnerBinding(b []byte) (OwnerBinding, error) {
	d := decoder{b: b, record: "owner binding"}
	var o OwnerBinding
	d.header(tagOwnerBinding)
	o.Worker = WorkerID(d.u64("worker"))
	o.Fence = FenceEpoch(d.u64("fence"))
	o.Deadline = LogicalTime(d.u64("deadline"))
	d.finish()
	if d.err == nil {
		d.invariant(o.AssertInvariants())
	}
	if d.err != nil {
		return OwnerBinding{}, d.err
	}
	return o, nil
}

// ClaimRecord is the persisted claim-cooldown state of one worker in one
// tenant: when its last successful claim happened.
type ClaimRecord struct {
	Worker      WorkerID
	LastClaimAt LogicalTime
}

// appendClaimRecord appends the encoding of c to dst.
func appendClaimRecord(dst []byte, c *ClaimRecord) []byte {
	e := encoder{b: dst}
	e.header(tagClaimRecord)
	e.u64(uint64(c.Worker))
	e.u64(uint64(c.LastClaimAt))
	return e.b
}

// EncodeClaimRecord returns the encoding of c.
func EncodeClaimRecord(c *ClaimRecord) []byte { return appendClaimRecord(nil, c) }

// DecodeClaimRecord decodes a claim record.
func DecodeClaimRecord(b []byte) (ClaimRecord, error) {
	d := decoder{b: b, record: "claim record"}
	var c ClaimRecord
	d.header(tagClaimRecord)
	c.Worker = WorkerID(d.u64("worker"))
	c.LastClaimAt = LogicalTime(d.u64("last claim at"))
	d.finish()
	if d.err != nil {
		return ClaimRecord{}, d.err
	}
	return c, nil
}
