package coord

import (
	"bytes"
	"slices"
)

// Watermark is a run's progress watermark (seed 004's RunProgress
// watermark, for tracking convergence): every key of the run's key space
// from its first root's start up to, not including, Key has been
// processed; Complete says the whole key space from that start has been.
// A Done shard's range counts whole; an Active or Parked shard counts up
// to and including its cursor's last key; a Split shard counts through
// its children. The watermark stops at the first key nothing processed.
type Watermark struct {
	Key      []byte
	Complete bool
}

// progressWatermark computes the watermark of a run's shards (the roots
// name its key space's start).
func progressWatermark(roots []ShardID, shards []*ShardRecord) Watermark {
	var start []byte
	found := false
	for _, s := range shards {
		if !s.Shard.IsDerived() && slices.Contains(roots, s.Shard) && (!found || bytes.Compare(s.Spec.Start, start) < 0) {
			start, found = s.Spec.Start, true
		}
	}
	if !found {
		return Watermark{}
	}
	type piece struct {
		start, done []byte // processed [start, done); done nil with all: to the end
		all         bool
	}
	var pieces []piece
	for _, s := range shards {
		switch {
		case s.Status == ShardSplit:
		case s.Status == ShardDone:
			pieces = append(pieces, piece{start: s.Spec.Start, done: s.Spec.End, all: s.Spec.Unbounded()})
		case s.Cursor.HasKey():
			pieces = append(pieces, piece{start: s.Spec.Start, done: append(bytes.Clone(s.Cursor.LastKey), 0)})
		}
	}
	slices.SortStableFunc(pieces, func(a, b piece) int { return bytes.Compare(a.start, b.start) })
	mark := bytes.Clone(start)
	for _, p := range pieces {
		if bytes.Compare(p.start, mark) > 0 {
			break // a gap: nothing processed at mark
		}
		if p.all {
			return Watermark{Complete: true}
		}
		if bytes.Compare(p.done, mark) > 0 {
			mark = bytes.Clone(p.done)
		}
	}
	return Watermark{Key: mark}
}
