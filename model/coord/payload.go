package coord

// payloads hashes op payloads under its own context. A per-operation tag
// inside the hashed input is a second layer of separation, so a checkpoint
// and a complete with the same cursor differ.
var payloads = newHashDomain("shardsim coord v1 op payload")

// Per-operation tags hashed in front of each payload.
const (
	tagCheckpoint     = "checkpoint"
	tagComplete       = "complete"
	tagPark           = "park"
	tagSplitReplace   = "split_replace"
	tagSplitResidual  = "split_residual"
	tagUnpark         = "unpark"
	tagRegisterShards = "register_shards"
	tagCompleteRun    = "complete_run"
	tagFailRun        = "fail_run"
	tagCancelRun      = "cancel_run"
)

func payloadHash(tag string, fill func(e *encoder)) uint64 {
	e := encoder{b: make([]byte, 0, 64)}
	e.bytes([]byte(tag))
	if fill != nil {
		fill(&e)
	}
	return payloads.sum64(e.b)
}

// hashCheckpoint fingerprints a checkpoint's payload (its cursor).
func hashCheckpoint(c Cursor) uint64 {
	return payloadHash(tagCheckpoint, func(e *encoder) { e.cursor(c) })
}

// hashComplete fingerprints a complete's payload (its final cursor).
func hashComplete(c Cursor) uint64 {
	return payloadHash(tagComplete, func(e *encoder) { e.cursor(c) })
}

// hashPark fingerprints a park's payload (its reason).
func hashPark(r ParkReason) uint64 {
	return payloadHash(tagPark, func(e *encoder) { e.u8(uint8(r)) })
}

// hashSplitReplace fingerprints a split_replace plan (its children, in
// order, length-prefixed).
func hashSplitReplace(p SplitReplacePlan) uint64 {
	return payloadHash(tagSplitReplace, func(e *encoder) {
		e.u32(uint32(len(p.Children)))
		for _, c := range p.Children {
			e.spec(c)
		}
	})
}

// hashSplitResidual fingerprints a split_residual plan (the shrunk parent
// spec and the residual spec).
func hashSplitResidual(p SplitResidualPlan) uint64 {
	return payloadHash(tagSplitResidual, func(e *encoder) {
		e.spec(p.Parent)
		e.spec(p.Residual)
	})
}

// hashUnpark fingerprints an unpark, which has no parameters beyond the
// shard the op-log belongs to.
func hashUnpark() uint64 { return payloadHash(tagUnpark, nil) }

// hashRegisterShards fingerprints a shard manifest, in order.
func hashRegisterShards(shards []InitialShard) uint64 {
	return payloadHash(tagRegisterShards, func(e *encoder) {
		e.u32(uint32(len(shards)))
		for _, s := range shards {
			e.u64(uint64(s.Shard))
			e.spec(s.Spec)
		}
	})
}

// hashRunTransition fingerprints complete_run, fail_run or cancel_run; the
// kind is the whole payload, so reusing an op id across them conflicts.
func hashRunTransition(kind OpKind) uint64 {
	switch kind {
	case OpKindCompleteRun:
		return payloadHash(tagCompleteRun, nil)
	case OpKindFailRun:
		return payloadHash(tagFailRun, nil)
	case OpKindCancelRun:
		return payloadHash(tagCancelRun, nil)
	}
	panic("coord: hashRunTransition of a non-run-transition kind " + kind.String())
}
