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

// HashCheckpoint fingerprints a checkpoint's payload (its cursor).
func HashCheckpoint(c Cursor) uint64 {
	return payloadHash(tagCheckpoint, func(e *encoder) { e.cursor(c) })
}

// HashComplete fingerprints a complete's payload (its final cursor).
func HashComplete(c Cursor) uint64 {
	return payloadHash(tagComplete, func(e *encoder) { e.cursor(c) })
}

// HashPark fingerprints a park's payload (its reason).
func HashPark(r ParkReason) uint64 {
	return payloadHash(tagPark, func(e *encoder) { e.u8(uint8(r)) })
}

// HashSplitReplace fingerprints a split_replace plan (its children, in
// order, length-prefixed).
func HashSplitReplace(p SplitReplacePlan) uint64 {
	return payloadHash(tagSplitReplace, func(e *encoder) {
		e.u32(uint32(len(p.Children)))
		for _, c := range p.Children {
			e.spec(c)
		}
	})
}

// HashSplitResidual fingerprints a split_residual plan (the shrunk parent
// spec and the residual spec).
func HashSplitResidual(p SplitResidualPlan) uint64 {
	return payloadHash(tagSplitResidual, func(e *encoder) {
		e.spec(p.Parent)
		e.spec(p.Residual)
	})
}

// HashUnpark fingerprints an unpark, which has no parameters beyond the
// shard the op-log belongs to.
func HashUnpark() uint64 { return payloadHash(tagUnpark, nil) }

// HashRegisterShards fingerprints a shard manifest, in order.
func HashRegisterShards(shards []InitialShard) uint64 {
	return payloadHash(tagRegisterShards, func(e *encoder) {
		e.u32(uint32(len(shards)))
		for _, s := range shards {
			e.u64(uint64(s.Shard))
			e.spec(s.Spec)
		}
	})
}

// HashRunTransition fingerprints complete_run, fail_run or cancel_run; the
// kind is the whole payload, so reusing an op id across them conflicts.
func HashRunTransition(kind OpKind) uint64 {
	switch kind {
	case OpKindCompleteRun:
		return payloadHash(tagCompleteRun, nil)
	case OpKindFailRun:
		return payloadHash(tagFailRun, nil)
	case OpKindCancelRun:
		return payloadHash(tagCancelRun, nil)
	}
	panic("coord: HashRunTransition of a non-run-transition kind " + kind.String())
}
