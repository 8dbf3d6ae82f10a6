package kvcheck

import (
	"bytes"

	"shardsim/property"
	"shardsim/simkv"
)

// ResumeLog is what a watcher that keeps resuming saw: a series of watches
// of the workload keyspace, each opened at the revision after the last
// event the previous one delivered (or at a compaction's revision after a
// compaction error), each cancelled after a while by the watcher itself.
type ResumeLog struct {
	Segments []ResumeSegment
	Broken   error // set if a stream broke; the log then proves nothing
}

// ResumeSegment is one watch of a ResumeLog: its start revision and the
// responses it delivered before the watcher cancelled it.
type ResumeSegment struct {
	Start     int64
	Compacted int64 // the store's compaction revision when the watch opened (-1: none)
	Responses []simkv.WatchResponse
}

// Open starts a new segment at start, with the store compacted at
// compacted (-1: never).
func (l *ResumeLog) Open(start, compacted int64) {
	l.Segments = append(l.Segments, ResumeSegment{Start: start, Compacted: compacted})
}

// Add records a response of the current segment.
func (l *ResumeLog) Add(r simkv.WatchResponse) {
	if n := len(l.Segments); n > 0 {
		l.Segments[n-1].Responses = append(l.Segments[n-1].Responses, r)
	}
}

// CheckResumable checks KV.WatchResumable against ref, a complete log of a
// watch of the same keyspace from its first revision: every resumed watch
// delivers exactly ref's events from its start revision on, in order, none
// before it and none missing (as far as it ran), or is refused with a
// compaction error naming a compaction at or above its start.
//
// A deletion at or below the compaction revision may be missing: etcd's
// compaction drops tombstones, so a watch started at the compaction
// revision does not replay a delete there.
//
// What it cannot see: events a segment delivered beyond the end of ref
// (ref is complete, so there are none in a run that ended idle), and a
// compaction error's revision beyond telling it covers the start.
func CheckResumable(l *ResumeLog, ref *WatchLog) *property.Violation {
	if l.Broken != nil || ref.Broken != nil {
		return nil
	}
	var all []simkv.Event
	for _, o := range ref.Responses {
		all = append(all, o.Resp.Events...)
	}
	for i, seg := range l.Segments {
		var got []simkv.Event
		for _, r := range seg.Responses {
			if r.Canceled && r.CompactRevision > 0 {
				if len(got) > 0 || r.CompactRevision < seg.Start {
					return property.Violated(property.KVWatchResumable, "watch %d from revision %d: compaction error at revision %d after %d events",
						i, seg.Start, r.CompactRevision, len(got))
				}
				break
			}
			got = append(got, r.Events...)
		}
		want := eventsFrom(all, seg.Start)
		for len(want) > 0 && want[0].Type == simkv.EventDelete && want[0].Kv.ModRevision <= seg.Compacted {
			want = want[1:] // a tombstone compaction removed
		}
		for j, e := range got {
			if j >= len(want) {
				break // beyond the reference: cannot judge
			}
			if !sameEvent(e, want[j]) {
				return property.Violated(property.KVWatchResumable, "watch %d resumed from revision %d: event %d is %s@%d, expected %s@%d",
					i, seg.Start, j, e.Kv.Key, e.Kv.ModRevision, want[j].Kv.Key, want[j].Kv.ModRevision)
			}
		}
	}
	return nil
}

// eventsFrom returns the events of all at revision start or later.
func eventsFrom(all []simkv.Event, start int64) []simkv.Event {
	for i, e := range all {
		if e.Kv.ModRevision >= start {
			return all[i:]
		}
	}
	return nil
}

func sameEvent(a, b simkv.Event) bool {
	return a.Type == b.Type && a.Kv.ModRevision == b.Kv.ModRevision && bytes.Equal(a.Kv.Key, b.Kv.Key) && bytes.Equal(a.Kv.Value, b.Kv.Value)
}
