package fsm

import "shardsim/model/migrate/mvcc"

// Decision is what applying an entry decided by reading the state it met:
// whether a write is admitted, which versions a compaction trims, which
// keys a cleanup clears, what a promotion batch moves. The apply then
// makes its changes by that decision.
//
// Apply is deterministic, so applying an entry to an equal state decides
// the same. The group layer uses that: the first voter to apply an entry
// decides, and a voter whose state it knows to be equal to that voter's
// state before the entry (see group.Cluster.ApplyCommitted) applies the
// same entry by the same Decision, without the reads that made it. Each
// voter still makes every change to its own state: replicas share no
// mutable state, only the decision, which nobody changes once it is made
// until Reset (after which nobody follows it: a voter that would have
// decides alone).
type Decision struct {
	made bool
	done bool        // promotion: nothing staged is left after the batch
	err  error       // write: the admission's answer
	cuts []cut       // compaction: where each key with history is trimmed
	keys []string    // cleanup: the moved span's keys
	work []promotion // promotion: the batch, oldest first within a key
}

// promotion is one staged version of a promotion batch: its staged key,
// the live key it is promoted to and whether it is put there (it is not
// when live holds it already, or, with the bug, when a newer live version
// shadows it); the staged version goes either way.
type promotion struct {
	staged, raw string
	v           mvcc.Version
	put         bool
}

// Made reports whether d holds a decision (an apply has filled it).
func (d *Decision) Made() bool { return d.made }

// Reset empties d for another apply to decide, keeping the room of its
// lists and no key or value they held. Most decisions hold no list (a
// write's): those it leaves alone, as it does the lists' headers.
func (d *Decision) Reset() {
	d.made, d.err, d.done = false, nil, false
	if len(d.cuts) > 0 {
		clear(d.cuts)
		d.cuts = d.cuts[:0]
	}
	if len(d.keys) > 0 {
		clear(d.keys)
		d.keys = d.keys[:0]
	}
	if len(d.work) > 0 {
		clear(d.work)
		d.work = d.work[:0]
	}
}
