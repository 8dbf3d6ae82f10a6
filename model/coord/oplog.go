package coord

// OpKind is the kind of an idempotent operation recorded in an op-log.
// Shard op-logs hold the shard kinds, run op-logs the run kinds. The
// discriminants are persisted and must never change.
type OpKind uint8

const (
	OpKindCheckpoint     OpKind = 0 // shard: checkpoint
	OpKindComplete       OpKind = 1 // shard: complete
	OpKindPark           OpKind = 2 // shard: park_shard
	OpKindSplitReplace   OpKind = 3 // shard: split_replace
	OpKindSplitResidual  OpKind = 4 // shard: split_residual
	OpKindUnpark         OpKind = 5 // shard: unpark_shard (admin)
	OpKindRegisterShards OpKind = 6 // run: register_shards
	OpKindCompleteRun    OpKind = 7 // run: complete_run
	OpKindFailRun        OpKind = 8 // run: fail_run
	OpKindCancelRun      OpKind = 9 // run: cancel_run
)

// Valid reports whether k is a known discriminant.
func (k OpKind) Valid() bool { return k <= OpKindCancelRun }

// ShardKind reports whether k belongs in a shard op-log.
func (k OpKind) ShardKind() bool { return k <= OpKindUnpark }

// RunKind reports whether k belongs in a run op-log.
func (k OpKind) RunKind() bool { return k >= OpKindRegisterShards && k <= OpKindCancelRun }

// String names the kind.
func (k OpKind) String() string {
	switch k {
	case OpKindCheckpoint:
		return "checkpoint"
	case OpKindComplete:
		return "complete"
	case OpKindPark:
		return "park"
	case OpKindSplitReplace:
		return "split_replace"
	case OpKindSplitResidual:
		return "split_residual"
	case OpKindUnpark:
		return "unpark"
	case OpKindRegisterShards:
		return "register_shards"
	case OpKindCompleteRun:
		return "complete_run"
	case OpKindFailRun:
		return "fail_run"
	case OpKindCancelRun:
		return "cancel_run"
	}
	return "op-kind(?)"
}

// OpResult is the stored outcome of a logged operation. The discriminants
// are persisted and must never change.
//
//   - OpCompleted: the operation took effect.
//   - OpError: the lease holder's request passed the idempotency and lease
//     checks and was then refused for its payload (a cursor that is
//     missing, reset, regressing or out of bounds, a split plan that does
//     not partition the range, a spawn cap, an unknown park reason). The
//     refusal is remembered with its code (OpLogEntry.Refusal), so a retry
//     of the same op id and payload answers the same refusal, as Stripe's
//     idempotency keys answer a stored error, even once the lease is gone.
//   - OpSuperseded: the operation took effect and a later operation has
//     since overtaken it: when a shard ends (complete, park, split_replace)
//     its earlier checkpoints are marked superseded, since the cursor they
//     recorded is no longer the shard's progress. A retry still replays.
type OpResult uint8

const (
	OpCompleted  OpResult = 0 // the operation succeeded
	OpError      OpResult = 1 // the operation was refused for its payload
	OpSuperseded OpResult = 2 // the operation succeeded; a later one overtook it
)

// Valid reports whether r is a known discriminant.
func (r OpResult) Valid() bool { return r <= OpSuperseded }

// String names the result.
func (r OpResult) String() string {
	switch r {
	case OpCompleted:
		return "completed"
	case OpError:
		return "error"
	case OpSuperseded:
		return "superseded"
	}
	return "op-result(?)"
}

// OpLogEntry is one remembered operation.
type OpLogEntry struct {
	Op          OpID
	Kind        OpKind
	Result      OpResult
	Refusal     Code   // the refusal's code when Result is OpError, else 0
	PayloadHash uint64 // domain-separated blake3 of the operation's parameters
	ExecutedAt  LogicalTime
}

// opRing is a fixed-size FIFO of entries: pushing onto a full ring evicts
// the oldest. It is an array, not a slice, so copying a record copies its
// op-log and pure transitions can never alias a stored record's log.
type opRing struct {
	buf  [shardOpLogCap]OpLogEntry
	head uint8 // index of the oldest entry
	n    uint8
}

func (r *opRing) len() int { return int(r.n) }

// at returns the i-th entry, oldest first.
func (r *opRing) at(i int) OpLogEntry { return r.buf[(int(r.head)+i)%len(r.buf)] }

// push appends e, evicting the oldest entry once capacity entries are held.
func (r *opRing) push(e OpLogEntry, capacity int) {
	if int(r.n) < capacity {
		r.buf[(int(r.head)+int(r.n))%len(r.buf)] = e
		r.n++
		return
	}
	// Full: overwrite the oldest and advance. capacity may be smaller than
	// the array, so rebuild contiguously when it is.
	if capacity == len(r.buf) {
		r.buf[r.head] = e
		r.head = uint8((int(r.head) + 1) % len(r.buf))
		return
	}
	entries := r.entries()
	r.reset(append(entries[1:], e))
}

func (r *opRing) find(op OpID) (OpLogEntry, bool) {
	for i := 0; i < int(r.n); i++ {
		if e := r.at(i); e.Op == op {
			return e, true
		}
	}
	return OpLogEntry{}, false
}

// remove deletes the entry for op, keeping the order of the rest.
func (r *opRing) remove(op OpID) {
	if _, ok := r.find(op); !ok {
		return
	}
	entries := r.entries()
	kept := entries[:0]
	for _, e := range entries {
		if e.Op != op {
			kept = append(kept, e)
		}
	}
	r.reset(kept)
}

func (r *opRing) entries() []OpLogEntry {
	out := make([]OpLogEntry, r.n)
	for i := range out {
		out[i] = r.at(i)
	}
	return out
}

func (r *opRing) reset(entries []OpLogEntry) {
	*r = opRing{}
	for i, e := range entries {
		r.buf[i] = e
	}
	r.n = uint8(len(entries))
}

func (r *opRing) equal(o *opRing) bool {
	if r.n != o.n {
		return false
	}
	for i := 0; i < int(r.n); i++ {
		if r.at(i) != o.at(i) {
			return false
		}
	}
	return true
}

// ShardOpLog is a shard's op-log: the last shardOpLogCap operations.
type ShardOpLog struct{ r opRing }

// Len returns the number of entries held.
func (l *ShardOpLog) Len() int { return l.r.len() }

// Entries returns the entries, oldest first.
func (l *ShardOpLog) Entries() []OpLogEntry { return l.r.entries() }

// At returns the i-th entry, oldest first (0 <= i < Len), without copying
// the log: readers that judge every record of every state use it.
func (l *ShardOpLog) At(i int) OpLogEntry { return l.r.at(i) }

// Find returns the entry for op, if it is still held.
func (l *ShardOpLog) Find(op OpID) (OpLogEntry, bool) { return l.r.find(op) }

// Push records e, evicting the oldest entry when full.
func (l *ShardOpLog) Push(e OpLogEntry) { l.r.push(e, shardOpLogCap) }

// Remove forgets the entry for op (used only by the coord.opid-conflict-
// ignored bug, which re-executes an op id and must not log it twice).
func (l *ShardOpLog) Remove(op OpID) { l.r.remove(op) }

// Equal reports whether l and o hold the same entries in the same order.
func (l ShardOpLog) Equal(o ShardOpLog) bool { return l.r.equal(&o.r) }

// newShardOpLog builds an op-log from entries, oldest first, keeping only
// the newest shardOpLogCap.
func newShardOpLog(entries ...OpLogEntry) ShardOpLog {
	var l ShardOpLog
	for _, e := range entries {
		l.Push(e)
	}
	return l
}

// RunOpLog is a run's op-log: the last runOpLogCap operations.
type RunOpLog struct{ r opRing }

// Len returns the number of entries held.
func (l *RunOpLog) Len() int { return l.r.len() }

// Entries returns the entries, oldest first.
func (l *RunOpLog) Entries() []OpLogEntry { return l.r.entries() }

// At returns the i-th entry, oldest first (0 <= i < Len).
func (l *RunOpLog) At(i int) OpLogEntry { return l.r.at(i) }

// Find returns the entry for op, if it is still held.
func (l *RunOpLog) Find(op OpID) (OpLogEntry, bool) { return l.r.find(op) }

// Push records e, evicting the oldest entry when full.
func (l *RunOpLog) Push(e OpLogEntry) { l.r.push(e, runOpLogCap) }

// Remove forgets the entry for op (see ShardOpLog.Remove).
func (l *RunOpLog) Remove(op OpID) { l.r.remove(op) }

// Equal reports whether l and o hold the same entries in the same order.
func (l RunOpLog) Equal(o RunOpLog) bool { return l.r.equal(&o.r) }

// newRunOpLog builds an op-log from entries, oldest first, keeping only the
// newest runOpLogCap.
func newRunOpLog(entries ...OpLogEntry) RunOpLog {
	var l RunOpLog
	for _, e := range entries {
		l.Push(e)
	}
	return l
}
