package coord

import "bytes"

// CursorSemantics is a per-run setting for when cursor advancement counts
// as committed progress. The coordinator enforces the same monotonicity and
// bounds rules under both; the value is persisted, so discriminants are
// stable.
type CursorSemantics uint8

const (
	// SemanticsCompleted advances the cursor only once all work up to it is
	// processed and durable.
	SemanticsCompleted CursorSemantics = 0
	// SemanticsDispatched advances the cursor once work up to it has been
	// durably dispatched.
	SemanticsDispatched CursorSemantics = 1
)

// Valid reports whether s is a known discriminant.
func (s CursorSemantics) Valid() bool { return s <= SemanticsDispatched }

// String names the semantics.
func (s CursorSemantics) String() string {
	switch s {
	case SemanticsCompleted:
		return "completed"
	case SemanticsDispatched:
		return "dispatched"
	}
	return "semantics(?)"
}

// Cursor is a shard's progress: LastKey is the last key fully processed
// (coordinator-visible and compared lexicographically); Token is opaque
// connector resume state. An empty LastKey means "no progress yet" and an
// empty Token means "no token"; the empty key itself is therefore never a
// cursor position.
type Cursor struct {
	LastKey []byte
	Token   []byte
}

// HasKey reports whether the cursor records any progress.
func (c Cursor) HasKey() bool { return len(c.LastKey) > 0 }

// Equal reports whether c and o are the same cursor.
func (c Cursor) Equal(o Cursor) bool {
	return bytes.Equal(c.LastKey, o.LastKey) && bytes.Equal(c.Token, o.Token)
}

// Clone returns a deep copy.
func (c Cursor) Clone() Cursor {
	return Cursor{LastKey: cloneBytes(c.LastKey), Token: cloneBytes(c.Token)}
}

// CursorViolation is why a cursor update was refused.
type CursorViolation uint8

const (
	// CursorOK means the update is allowed.
	CursorOK CursorViolation = iota
	// CursorMissingKey means a checkpoint carried no last key.
	CursorMissingKey
	// CursorReset means the update would return a cursor with progress to
	// "no progress".
	CursorReset
	// CursorRegression means the new last key sorts before the old one.
	CursorRegression
	// CursorOutOfBounds means the new last key lies outside [start, end).
	CursorOutOfBounds
)

// String describes the violation without revealing any key.
func (v CursorViolation) String() string {
	switch v {
	case CursorOK:
		return "ok"
	case CursorMissingKey:
		return "checkpoint carries no last key"
	case CursorReset:
		return "cursor would return to no progress"
	case CursorRegression:
		return "cursor last key would move backwards"
	case CursorOutOfBounds:
		return "cursor last key outside the shard's range"
	}
	return "cursor violation(?)"
}

// CursorRules selects which cursor checks run. The zero value runs them
// all; the injectable bugs switch single checks off.
type CursorRules struct {
	RequireKey     bool // checkpoint: the update must carry a last key
	SkipRegression bool // bug coord.cursor-regression
	SkipBounds     bool // bug coord.cursor-out-of-bounds
}

// checkCursorUpdate applies the monotonicity and bounds rules to moving a
// shard with range spec from cursor old to cursor next:
//
//	old none,    next none           allowed (no-op)
//	old none,    next k              allowed (first progress)
//	old a,       next b with b >= a  allowed (progress or retry)
//	old some,    next none           refused (reset)
//	old a,       next b with b < a   refused (regression)
//
// and a present next last key must lie in [spec.Start, spec.End).
func checkCursorUpdate(spec ShardSpec, old, next Cursor, rules CursorRules) CursorViolation {
	if !next.HasKey() {
		if rules.RequireKey {
			return CursorMissingKey
		}
		if old.HasKey() {
			return CursorReset
		}
		return CursorOK
	}
	if old.HasKey() && !rules.SkipRegression && bytes.Compare(next.LastKey, old.LastKey) < 0 {
		return CursorRegression
	}
	if !rules.SkipBounds && !spec.Contains(next.LastKey) {
		return CursorOutOfBounds
	}
	return CursorOK
}
