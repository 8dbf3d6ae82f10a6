package simkv

// EventType mirrors mvccpb.Event_EventType.
type EventType int32

// Event types, with etcd's numeric values.
const (
	EventPut EventType = iota
	EventDelete
)

// Event mirrors mvccpb.Event. A delete's Kv holds only the key and the
// revision of the delete.
type Event struct {
	Type   EventType
	Kv     KeyValue
	PrevKv *KeyValue // with WatchRequest.PrevKv: the key as it was one revision before
}

// WatchFilter mirrors WatchCreateRequest.FilterType.
type WatchFilter int32

// Watch filters, with etcd's numeric values.
const (
	FilterNoPut WatchFilter = iota
	FilterNoDelete
)

// WatchRequest mirrors etcdserverpb.WatchCreateRequest. An empty Key means
// "\x00" (the smallest key), as in etcd. StartRevision 0 means the next
// revision. ProgressNotify and Fragment are accepted and have no effect:
// the model sends no periodic progress and never splits a response.
type WatchRequest struct {
	Key, RangeEnd  []byte
	StartRevision  int64
	PrevKv         bool
	ProgressNotify bool
	Filters        []WatchFilter
	Fragment       bool
}

// WatchResponse mirrors etcdserverpb.WatchResponse.
type WatchResponse struct {
	Header          ResponseHeader
	WatchID         int64
	Created         bool
	Canceled        bool
	CompactRevision int64
	CancelReason    string
	Events          []Event
}

// watchBatchMaxRevs is how many revisions etcd puts at most in one catch-up
// response (mvcc's watchBatchMaxRevs).
const watchBatchMaxRevs = 1000

// revEvents is the log of one revision's changes, in write order.
type revEvents struct {
	rev    int64
	events []Event
}

type watcher struct {
	id              int64
	minRev          int64 // first revision to deliver (a future start waits for it)
	sp              span
	prevKv          bool
	noPut, noDelete bool
	dead            bool // canceled by compaction: no more events, still cancelable
}

// watchState holds the watchers, in id order, and the responses not yet
// taken.
type watchState struct {
	watchers []*watcher
	nextID   int64
	pending  []WatchResponse
	spare    []WatchResponse // the array takeWatchResponses last handed out, for reuse
}

func newWatchState() watchState { return watchState{} }

func (ws watchState) clone() watchState {
	c := ws
	c.watchers = make([]*watcher, len(ws.watchers))
	for i, w := range ws.watchers {
		cw := *w
		c.watchers[i] = &cw
	}
	c.pending = append([]WatchResponse(nil), ws.pending...)
	c.spare = nil // in use by the original's caller
	return c
}

// Watch opens a watch and queues its responses: first the created notice
// (header at the current revision), then, for a start revision at or below
// the current one, the history since it in batches of whole revisions, or
// a Canceled response carrying the compact revision when the start is
// below the last compaction. Later changes follow as they happen, one
// response per revision. Ids count from 0, as on one etcd watch stream.
//
// A range whose end is not above its key fails with ErrEmptyWatcherRange
// and queues etcd's answer for it: created and canceled, id -1.
func (s *Store) Watch(req WatchRequest) (int64, error) {
	key := req.Key
	if len(key) == 0 {
		key = []byte{0}
	}
	// The watcher outlives the request: its span holds copies.
	sp := spanOf(cloneBytes(key), cloneBytes(req.RangeEnd))
	if sp.empty() {
		s.queue(WatchResponse{Header: s.header(), WatchID: -1, Created: true, Canceled: true,
			CancelReason: ErrEmptyWatcherRange.Error()})
		return -1, ErrEmptyWatcherRange
	}
	w := &watcher{id: s.watch.nextID, sp: sp, prevKv: req.PrevKv}
	for _, f := range req.Filters {
		switch f {
		case FilterNoPut:
			w.noPut = true
		case FilterNoDelete:
			w.noDelete = true
		}
	}
	s.watch.nextID++
	s.watch.watchers = append(s.watch.watchers, w)
	s.queue(WatchResponse{Header: s.header(), WatchID: w.id, Created: true})
	start := req.StartRevision
	w.minRev = max(start, s.rev+1)
	if start == 0 || start > s.rev {
		return w.id, nil
	}
	if start < s.compactRev {
		w.dead = true
		s.queue(WatchResponse{WatchID: w.id, Canceled: true, CompactRevision: s.compactRev})
		return w.id, nil
	}
	s.catchUp(w, start)
	return w.id, nil
}

// catchUp queues the logged events from revision start on, at most
// watchBatchMaxRevs revisions per response, each headed with the current
// revision like etcd's syncWatchers.
func (s *Store) catchUp(w *watcher, start int64) {
	var evs []Event
	revs := 0
	flush := func() {
		if len(evs) > 0 {
			s.queue(WatchResponse{Header: s.header(), WatchID: w.id, Events: evs})
		}
		evs, revs = nil, 0
	}
	for i := s.logIndex(start); i < len(s.log); i++ {
		if got := s.filter(w, s.log[i].rev, s.log[i].events); len(got) > 0 {
			evs = append(evs, got...)
			if revs++; revs == watchBatchMaxRevs {
				flush()
			}
		}
	}
	flush()
}

// logIndex returns the index of the first logged revision >= rev.
func (s *Store) logIndex(rev int64) int {
	lo, hi := 0, len(s.log)
	for lo < hi {
		m := (lo + hi) / 2
		if s.log[m].rev < rev {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// filter returns the events of one revision that w wants, with their
// previous versions when asked for. As in etcd's watch server, the previous
// version is read at rev-1 and is absent for a create, and when rev-1 has
// been compacted.
//
// A watcher without PrevKv that wants every event of the revision gets the
// logged events themselves, capped so an append cannot reach the log's
// array: events are never changed once logged, and every holder only
// reads them.
func (s *Store) filter(w *watcher, rev int64, events []Event) []Event {
	wanted := 0
	for i := range events {
		if w.wants(&events[i]) { // read in place: most events are handed on as logged
			wanted++
		}
	}
	switch {
	case wanted == 0:
		return nil
	case wanted == len(events) && !w.prevKv:
		return events[:len(events):len(events)]
	}
	out := make([]Event, 0, wanted) // sized once: a second pass is cheaper than regrowing
	for i := range events {
		if !w.wants(&events[i]) {
			continue
		}
		ev := events[i]
		if w.prevKv && !(ev.Type == EventPut && ev.Kv.CreateRevision == ev.Kv.ModRevision) && rev-1 >= s.compactRev {
			if prev, ok := s.ks.atBytes(ev.Kv.Key, rev-1); ok {
				ev.PrevKv = &prev
			}
		}
		out = append(out, ev)
	}
	return out
}

// wants reports whether the watcher takes the event: its key is in range
// and its type is not filtered out.
func (w *watcher) wants(ev *Event) bool {
	return w.sp.contains(ev.Kv.Key) &&
		!(ev.Type == EventPut && w.noPut) && !(ev.Type == EventDelete && w.noDelete)
}

// commitEvents logs one revision's changes and notifies the live watchers,
// in id order.
func (s *Store) commitEvents(rev int64, events []Event) {
	s.log, s.logTail = appendShared(s.log, s.logTail, revEvents{rev: rev, events: events})
	for _, w := range s.watch.watchers {
		if w.dead || rev < w.minRev {
			continue
		}
		if got := s.filter(w, rev, events); len(got) > 0 {
			s.queue(WatchResponse{Header: ResponseHeader{Revision: rev}, WatchID: w.id, Events: got})
		}
	}
}

// compactLog drops the logged revisions below rev, and at rev itself the
// events etcd's compaction removes from its backend: a key's write at rev
// survives only if it is the key's last write at rev and not a delete.
func (s *Store) compactLog(rev int64) {
	i := s.logIndex(rev)
	s.log, s.logTail = append([]revEvents(nil), s.log[i:]...), nil // a copy of our own, changed below
	if len(s.log) == 0 || s.log[0].rev != rev {
		return
	}
	evs := s.log[0].events
	var kept []Event
	for j, ev := range evs {
		if ev.Type == EventDelete {
			continue
		}
		last := true
		for _, later := range evs[j+1:] {
			if string(later.Kv.Key) == string(ev.Kv.Key) {
				last = false
			}
		}
		if last {
			kept = append(kept, ev)
		}
	}
	s.log[0] = revEvents{rev: rev, events: kept}
}

// CancelWatch cancels a watch and queues etcd's Canceled response for it.
// It reports whether the watch existed.
func (s *Store) CancelWatch(id int64) bool {
	for i, w := range s.watch.watchers {
		if w.id == id {
			s.watch.watchers = append(s.watch.watchers[:i:i], s.watch.watchers[i+1:]...)
			s.queue(WatchResponse{Header: s.header(), WatchID: id, Canceled: true})
			return true
		}
	}
	return false
}

func (s *Store) queue(r WatchResponse) { s.watch.pending = append(s.watch.pending, r) }

// TakeWatchResponses returns the watch responses produced since the last
// call, in the order they were produced, and forgets them.
func (s *Store) TakeWatchResponses() []WatchResponse {
	out := s.watch.pending
	s.watch.pending = nil
	return out
}

// takeWatchResponses is TakeWatchResponses for a caller that is done with
// the answer before it next takes (the server's flush, which copies each
// response into its stream). Two arrays alternate: the answer's array is
// cleared and reused by the call after next, so a steady stream of
// responses allocates nothing.
func (s *Store) takeWatchResponses() []WatchResponse {
	out := s.watch.pending
	clear(s.watch.spare) // the caller is done with it: hold no events
	s.watch.pending, s.watch.spare = s.watch.spare[:0], out
	return out
}
