package simkv

import (
	"shardsim/simclock"
)

// WatchStream is a client's open watch. Responses arrive as events of the
// owning actor, in the order the server produced them (a stream is FIFO even
// though each message draws its own latency). A partition breaks the stream:
// the client gets one final error and may open a new watch from the revision
// after the last one it saw, as etcd's client does.
type WatchStream struct {
	server  *Server
	client  *Client
	ctx     *simclock.Context
	storeID int64
	onResp  func(ctx *simclock.Context, resp WatchResponse)
	onErr   func(ctx *simclock.Context, err error)
	last    simclock.Time // delivery time of the previous message
	queue   []streamMsg   // messages sent, in order; those from head on are not yet delivered
	head    int
	closed  bool
}

// streamDelivery is a stream as the callback of its deliveries: a pointer
// handed to DeferCall costs no allocation, where a closure or a method
// value bound per stream costs one, and Fire stays out of the stream's
// API.
type streamDelivery WatchStream

// Fire delivers the stream's oldest undelivered message.
func (d *streamDelivery) Fire(ctx *simclock.Context) { (*WatchStream)(d).deliver(ctx) }

// streamMsg is one message of a watch stream: a response, or the error
// that ends a broken stream.
type streamMsg struct {
	resp WatchResponse
	err  error // set: the final error, resp unused
}

// Watch opens a watch. onResp receives every watch response (the created
// notice first); onErr receives the error that ends a broken stream.
func (c *Client) Watch(ctx *simclock.Context, req WatchRequest,
	onResp func(*simclock.Context, WatchResponse), onErr func(*simclock.Context, error)) *WatchStream {
	s := c.server
	s.loop.Shared()
	w := &WatchStream{server: s, client: c, ctx: ctx, storeID: -1, onResp: onResp, onErr: onErr}
	if s.partitioned[c.owner] {
		w.closed = true
		ctx.Defer(s.faults.MinLatency, func(ctx *simclock.Context) { onErr(ctx, ErrUnavailable) })
		return w
	}
	s.loop.After(s.latency(), func() {
		if w.closed {
			return
		}
		if s.mutate == ResumeSkipsStart && req.StartRevision > 1 {
			req.StartRevision++ // the mutation: one revision late
		}
		id, err := s.store.Watch(req)
		if err != nil {
			w.breakStream(err)
			return
		}
		w.storeID = id
		s.streams = append(s.streams, w)
		s.loop.Rec("kv.watch", c.name).Int("watch", id).Int("from", req.StartRevision).End()
		s.flushWatches()
	})
	return w
}

// Cancel closes the stream from the client side.
func (w *WatchStream) Cancel() {
	w.server.loop.Shared()
	if w.closed {
		return
	}
	w.closed = true
	if w.storeID >= 0 {
		w.server.store.CancelWatch(w.storeID)
	}
	w.server.dropStream(w)
}

// breakStream ends the stream with err delivered to the client.
func (w *WatchStream) breakStream(err error) {
	if w.closed {
		return
	}
	w.Cancel()
	w.send(streamMsg{err: err})
}

// send delivers one message after the previous one. Each delivery event
// hands over the oldest message not yet delivered rather than its own, so
// the stream stays FIFO even when two deliveries fall due at the same time
// and the loop's order choice runs them either way round (or a pause holds
// them and releases them together).
func (w *WatchStream) send(m streamMsg) {
	s := w.server
	at := s.loop.Now().Add(s.latency())
	if at < w.last {
		at = w.last
	}
	w.last = at
	if w.queue == nil {
		// Room for the created notice and the first events: most streams
		// have two messages in flight at some point.
		w.queue = make([]streamMsg, 0, 2)
	}
	w.queue = append(w.queue, m)
	w.ctx.DeferCall(at.Sub(s.loop.Now()), (*streamDelivery)(w))
}

// deliver hands the oldest undelivered message to the client. The queue's
// array is reused once every message in it is delivered.
func (w *WatchStream) deliver(ctx *simclock.Context) {
	m := w.queue[w.head]
	w.queue[w.head] = streamMsg{} // the client's response is no longer ours to hold
	if w.head++; w.head == len(w.queue) {
		w.queue, w.head = w.queue[:0], 0
	}
	if m.err != nil {
		w.onErr(ctx, m.err)
		return
	}
	w.onResp(ctx, m.resp)
}

// flushWatches routes the store's pending watch responses to their streams.
// It is done with them when it returns (streams keep copies), as
// takeWatchResponses requires.
func (s *Server) flushWatches() {
	for _, r := range s.mutateWatch(s.store.takeWatchResponses()) {
		for _, w := range s.streams {
			if w.storeID == r.WatchID && !w.closed {
				w.send(streamMsg{resp: r})
				break
			}
		}
	}
}

// mutateWatch applies a watch mutation (tests of the watch checkers) to
// the responses about to be delivered. Without one they go as they are.
func (s *Server) mutateWatch(rs []WatchResponse) []WatchResponse {
	switch s.mutate {
	case WatchDuplicate, WatchDrop, WatchSplitTxn, WatchReorder:
	default:
		for i := range rs {
			if len(rs[i].Events) > 0 {
				s.watchSent++
			}
		}
		return rs
	}
	var out []WatchResponse
	for _, r := range rs {
		if len(r.Events) == 0 {
			out = append(out, r)
			continue
		}
		s.watchSent++
		switch {
		case s.mutate == WatchDuplicate && s.watchSent%5 == 0:
			out = append(out, r, r)
		case s.mutate == WatchDrop && s.watchSent%5 == 0:
		case s.mutate == WatchSplitTxn && len(r.Events) > 1 && r.Events[0].Kv.ModRevision == r.Events[1].Kv.ModRevision:
			// The first part is capped: r.Events may be the store's
			// logged events themselves (see Store.filter), and a holder
			// appending to it must not overwrite the second event.
			a, b := r, r
			a.Events, b.Events = r.Events[:1:1], r.Events[1:]
			out = append(out, a, b)
		case s.mutate == WatchReorder && s.heldResp != nil && s.heldResp.WatchID == r.WatchID:
			out = append(out, r, *s.heldResp) // the held response comes after the next one
			s.heldResp = nil
		case s.mutate == WatchReorder && s.watchSent%5 == 0 && s.heldResp == nil:
			held := r
			s.heldResp = &held
		default:
			out = append(out, r)
		}
	}
	return out
}

func (s *Server) dropStream(w *WatchStream) {
	for i, x := range s.streams {
		if x == w {
			s.streams = append(s.streams[:i], s.streams[i+1:]...)
			return
		}
	}
}
