package kvcheck

import (
	"testing"

	"shardsim/property"
	"shardsim/simkv"
)

func putEv(key string, rev int64) simkv.Event {
	return simkv.Event{Type: simkv.EventPut, Kv: simkv.KeyValue{Key: []byte(key), Value: []byte(key), ModRevision: rev}}
}

// KV.WatchResumable had no checker: a resumed watch that skips its start
// revision, starts too early, or reports a compaction below its start is
// caught; a faithful one passes.
func TestResumableCatchesBadResumes(t *testing.T) {
	ref := &WatchLog{Start: 1}
	ref.Add(0, simkv.WatchResponse{Events: []simkv.Event{putEv("a", 2), putEv("b", 3)}})
	ref.Add(0, simkv.WatchResponse{Events: []simkv.Event{putEv("c", 4), putEv("d", 5)}})
	seg := func(start int64, evs ...simkv.Event) ResumeSegment {
		return ResumeSegment{Start: start, Compacted: -1, Responses: []simkv.WatchResponse{{Created: true}, {Events: evs}}}
	}
	good := &ResumeLog{Segments: []ResumeSegment{seg(1, putEv("a", 2)), seg(3, putEv("b", 3), putEv("c", 4)), seg(5, putEv("d", 5))}}
	if v := CheckResumable(good, ref); v != nil {
		t.Fatalf("faithful resumes flagged: %v", v)
	}
	compacted := &ResumeLog{Segments: []ResumeSegment{{Start: 2, Compacted: -1, Responses: []simkv.WatchResponse{{Canceled: true, CompactRevision: 4}}}}}
	if v := CheckResumable(compacted, ref); v != nil {
		t.Fatalf("a compaction error covering the start flagged: %v", v)
	}
	for name, bad := range map[string]*ResumeLog{
		"skips its start":        {Segments: []ResumeSegment{seg(3, putEv("c", 4))}},
		"starts early":           {Segments: []ResumeSegment{seg(4, putEv("b", 3), putEv("c", 4))}},
		"compaction below start": {Segments: []ResumeSegment{{Start: 5, Compacted: -1, Responses: []simkv.WatchResponse{{Canceled: true, CompactRevision: 3}}}}},
	} {
		if v := CheckResumable(bad, ref); v == nil || v.Property != property.KVWatchResumable {
			t.Errorf("%s: got %v", name, v)
		}
	}
}
