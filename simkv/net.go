package simkv

import (
	"time"

	"shardsim/simclock"
)

// Observer sees every request a Server handles, for history recording and
// property checking. Calls are numbered from 1; internal applies (lease
// expiry) carry call id 0. Observers must not change the world.
type Observer interface {
	// OnInvoke: a client issued a request.
	OnInvoke(call uint64, client string, at simclock.Time, req Request)
	// OnApply: the store applied a request, moving its revision from before
	// to after. err is the store's answer, not a transport error.
	OnApply(call uint64, at simclock.Time, req Request, resp Response, err error, before, after int64)
	// OnReturn: the client received an answer (resp or err).
	OnReturn(call uint64, at simclock.Time, resp Response, err error)
}

// Server is a simulated etcd cluster as clients see it over a network: one
// linearizable Store, reached through request-level faults (loss before
// apply, loss of the answer, delay, client partitions, leader changes), with
// leases that expire on virtual time and watch streams delivered in order.
// Every fault is drawn from the server's Choices, so it replays with the run.
type Server struct {
	loop      *simclock.Loop
	store     *Store
	faults    FaultConfig
	choices   *simclock.Choices
	observers []Observer

	inflight      []*call // calls whose request or answer is still travelling, by id
	partitioned   map[simclock.ActorID]bool
	electionUntil simclock.Time
	tookOffice    simclock.Time  // when the last election's leader took office (never reset)
	watchSent     int            // watch responses with events delivered (for the watch mutations)
	heldResp      *WatchResponse // a response WatchReorder holds back
	leaseTimer    simclock.Timer
	leaseAt       simclock.Time
	expireFn      func()         // s.expireLeases, bound once: the lease timer is re-armed on most keep-alives
	streams       []*WatchStream // open watch streams, by id
	mutate        Mutation
	stats         Stats
	idle          []*call // finished calls nothing refers to any more, for reuse
}

// Stats counts what the network did to requests, so tests can show that the
// faults a run claims to inject really happened.
type Stats struct {
	Calls         int // requests submitted
	Applied       int // requests the store applied (including expiries)
	LostRequests  int // dropped before apply
	LostResponses int // applied, answer dropped
	Refused       int // refused by a partition
	Delayed       int // held back beyond the normal latency
	LeaderChanges int // elections
	Indeterminate int // calls that ended with an ambiguous error
	Expired       int // leases expired on virtual time
}

// Stats returns the counters so far.
func (s *Server) Stats() Stats { return s.stats }

// Mutation deliberately breaks the server, to prove the checkers catch it.
type Mutation int

const (
	// Faithful is the real behaviour.
	Faithful Mutation = iota
	// StaleTxnCompare evaluates txn compares against the state one write
	// ago: a compare-and-swap can succeed on a value that was just replaced.
	StaleTxnCompare
	// PhantomAck reports a lost request as applied: the client gets a success
	// answer for a write that never happened.
	PhantomAck
	// LateLeaseExpiry expires leases LateExpiryBy after their deadline.
	LateLeaseExpiry
	// ResumeSkipsStart starts a watch with a start revision above 1 one
	// revision late: a resumed watch misses the events of its start
	// revision.
	ResumeSkipsStart
	// StaleHeader answers a put with the revision before it applied.
	StaleHeader
	// WatchDuplicate delivers a watch response with events twice.
	WatchDuplicate
	// WatchDrop drops a watch response with events (every fifth).
	WatchDrop
	// WatchSplitTxn delivers the events of one revision in two responses.
	WatchSplitTxn
	// WatchReorder delivers two consecutive watch responses with events
	// in the wrong order.
	WatchReorder
)

// LateExpiryBy is how late LateLeaseExpiry expires a lease.
const LateExpiryBy = 2 * time.Second

// NewServer returns a server over store with the given faults, drawing from
// choices (nil means a quiet, fault-free network).
func NewServer(loop *simclock.Loop, store *Store, faults FaultConfig, choices *simclock.Choices) *Server {
	if choices == nil {
		choices = simclock.NewBytes(nil)
	}
	s := &Server{loop: loop, store: store, faults: faults, choices: choices, partitioned: map[simclock.ActorID]bool{}}
	s.expireFn = s.expireLeases
	return s
}

// Store returns the server's store (for checkers that inspect the truth).
func (s *Server) Store() *Store { return s.store }

// Observe adds an observer.
func (s *Server) Observe(o Observer) { s.observers = append(s.observers, o) }

// SetFaults replaces the fault configuration (the heal phase sets a quiet one).
func (s *Server) SetFaults(f FaultConfig) {
	s.loop.Shared()
	s.faults = f
}

// Faults returns the current fault configuration.
func (s *Server) Faults() FaultConfig { return s.faults }

// SetMutation switches on a deliberate server bug (tests of the checkers).
func (s *Server) SetMutation(m Mutation) {
	s.loop.Shared()
	s.mutate = m
}

// call is one request in flight.
type call struct {
	id       uint64
	client   *Client
	req      Request
	fate     Fate
	arriving bool // the request is still on its way to the server
	applied  bool
	done     bool // the client has its answer (or gave up)
	arrive   simclock.Timer
	deadline simclock.Timer
	reply    func(ctx *simclock.Context, resp Response, err error)
	ctx      *simclock.Context

	// A call is reused once nothing refers to it: it is done and none of
	// its callbacks is still scheduled. pending counts those: +1 when one
	// is scheduled, -1 when it runs or is cancelled. A callback dropped
	// with a crashed actor never runs, so its call is never reused (the
	// world's end frees it). The callbacks are bound once per call object.
	pending int
	out     Response // what the scheduled finish delivers
	outErr  error
	// outDetail is the trace detail of out when out is the answer the
	// store applied (outRecorded): kv.return records the bytes kv.apply
	// encoded instead of encoding the same response again. The buffer is
	// kept when the call is reused.
	outDetail   []byte
	outRecorded bool
	arriveFn    func()
	finishFn    func(*simclock.Context)
	deadlineFn  func(*simclock.Context)
}

// newCall returns a call to fill: a reused one, or a new one with its
// callbacks bound.
func (s *Server) newCall() *call {
	if n := len(s.idle); n > 0 {
		cl := s.idle[n-1]
		s.idle = s.idle[:n-1]
		return cl
	}
	cl := &call{}
	cl.arriveFn = func() {
		cl.pending--
		s.arrive(cl)
		s.release(cl)
	}
	cl.finishFn = func(ctx *simclock.Context) {
		cl.pending--
		s.finish(ctx, cl, cl.out, cl.outErr)
	}
	cl.deadlineFn = func(ctx *simclock.Context) {
		cl.pending--
		s.finish(ctx, cl, Response{}, ErrDeadlineExceeded)
	}
	return cl
}

// release puts cl up for reuse if nothing refers to it any more.
func (s *Server) release(cl *call) {
	if cl.pending != 0 || !cl.done {
		return
	}
	// Zeroed in place and the kept fields put back: a composite literal
	// with them was built on the stack and copied over the whole record.
	arrive, finish, deadline, detail := cl.arriveFn, cl.finishFn, cl.deadlineFn, cl.outDetail[:0]
	*cl = call{}
	cl.arriveFn, cl.finishFn, cl.deadlineFn, cl.outDetail = arrive, finish, deadline, detail
	s.idle = append(s.idle, cl)
}

// finishAfter schedules cl's finish with resp and err after d, as an
// event of its caller.
func (s *Server) finishAfter(cl *call, d time.Duration, resp Response, err error) {
	cl.out, cl.outErr, cl.outRecorded = resp, err, false
	cl.pending++
	cl.ctx.Defer(d, cl.finishFn)
}

func (s *Server) latency() time.Duration { return s.faults.Latency(s.choices) }

// submit starts a call on behalf of the actor behind ctx.
func (s *Server) submit(ctx *simclock.Context, c *Client, req Request, reply func(*simclock.Context, Response, error)) uint64 {
	s.loop.Shared()
	s.stats.Calls++
	cl := s.newCall()
	cl.id, cl.client, cl.req, cl.reply, cl.ctx = s.loop.NextID(), c, req, reply, ctx
	for _, o := range s.observers {
		o.OnInvoke(cl.id, c.name, s.loop.Now(), req)
	}
	if s.partitioned[c.owner] {
		cl.fate = Refused
		s.stats.Refused++
		s.finishAfter(cl, s.faults.MinLatency, Response{}, ErrUnavailable)
		d := s.loop.Rec("kv.refused", c.name).Uint("call", cl.id)
		req.AppendDetail(d)
		d.End()
		return cl.id
	}
	drawn := s.faults.Draw(s.choices)
	cl.fate = drawn.Fate
	lat := drawn.Latency
	switch cl.fate {
	case LostRequest:
		s.stats.LostRequests++
	case LostResponse:
		s.stats.LostResponses++
	}
	if drawn.Delayed {
		s.stats.Delayed++
	}
	d := s.loop.Rec("kv.send", c.name).Uint("call", cl.id).Str("fate", cl.fate.String()).Dur("in", lat)
	req.AppendDetail(d)
	d.End()
	if cl.fate == LostRequest && s.mutate == PhantomAck {
		// The mutant acknowledges what it never applied.
		ok := phantomResponse(req, s.store.Revision())
		s.finishAfter(cl, 2*lat, ok, nil)
	} else if cl.fate != LostRequest {
		cl.arriving = true
		cl.pending++
		cl.arrive = s.loop.After(lat, cl.arriveFn)
		s.inflight = append(s.inflight, cl)
	}
	cl.pending++
	cl.deadline = ctx.Defer(s.faults.TimeoutOr(defaultTimeout), cl.deadlineFn)
	return cl.id
}

// arrive applies a request that reached the server and sends the answer.
func (s *Server) arrive(cl *call) {
	cl.arriving = false
	if s.loop.Now() < s.electionUntil {
		// No leader: the request is rejected before it is proposed. The
		// answer is a leader-change error, which clients treat as ambiguous.
		s.loop.Rec("kv.no-leader", cl.client.name).Uint("call", cl.id).End()
		s.answer(cl, Response{}, ErrLeaderChanged, false)
		return
	}
	resp, err := s.apply(cl.id, cl.req, &cl.outDetail)
	cl.applied = true
	if cl.fate == LostResponse || s.partitioned[cl.client.owner] {
		s.loop.Rec("kv.answer-lost", cl.client.name).Uint("call", cl.id).End()
		s.forget(cl)
		return
	}
	s.answer(cl, resp, err, err == nil)
}

// answer sends a reply back over the network. recorded says that resp is
// the answer the store just applied, its detail in cl.outDetail.
func (s *Server) answer(cl *call, resp Response, err error, recorded bool) {
	s.forget(cl)
	if cl.done {
		return
	}
	s.finishAfter(cl, s.latency(), resp, err)
	cl.outRecorded = recorded
}

// apply runs one request against the store and tells the observers. With
// keep set, it copies the trace detail of a successful answer there.
func (s *Server) apply(id uint64, req Request, keep *[]byte) (Response, error) {
	before := s.store.Revision()
	var resp Response
	var err error
	if s.mutate == StaleTxnCompare && req.Txn != nil {
		resp, err = s.applyStaleTxn(req)
	} else {
		resp, err = s.store.Apply(s.loop.Now(), req)
	}
	if s.mutate == StaleHeader && err == nil && resp.Put != nil {
		resp.Put.Header.Revision = before // the mutation: the revision before the put
	}
	after := s.store.Revision()
	s.stats.Applied++
	for _, o := range s.observers {
		o.OnApply(id, s.loop.Now(), req, resp, err, before, after)
	}
	d := s.loop.Rec("kv.apply", "").Uint("call", id).Int("before", before).Int("after", after)
	if err != nil {
		d.Err("err", err)
	} else {
		at := len(d.Binary())
		resp.AppendDetail(d)
		if keep != nil {
			*keep = append((*keep)[:0], d.Binary()[at:]...)
		}
	}
	d.End()
	s.afterApply()
	return resp, err
}

// afterApply re-arms lease expiry and flushes watch events.
func (s *Server) afterApply() {
	if at, ok := s.store.NextLeaseDeadline(); ok {
		if at != s.leaseAt || s.leaseTimer == (simclock.Timer{}) {
			s.leaseTimer.Cancel()
			s.leaseAt = at
			fire := at
			if s.mutate == LateLeaseExpiry {
				fire = at.Add(LateExpiryBy)
			}
			s.leaseTimer = s.loop.At(fire, s.expireFn)
		}
	} else {
		s.leaseTimer.Cancel()
		s.leaseTimer, s.leaseAt = simclock.Timer{}, 0
	}
	s.flushWatches()
}

// expireLeases revokes every lease whose deadline has passed, one revision
// per lease, exactly as etcd's lessor does through a revoke proposal.
func (s *Server) expireLeases() {
	s.leaseTimer, s.leaseAt = simclock.Timer{}, 0
	for _, id := range s.store.ExpiredLeases(s.loop.Now()) {
		s.stats.Expired++
		s.apply(0, Request{LeaseRevoke: &LeaseRevokeRequest{ID: id}}, nil)
	}
	s.afterApply()
}

// finish delivers the outcome of a call to its client, once.
func (s *Server) finish(ctx *simclock.Context, cl *call, resp Response, err error) {
	s.loop.Shared()
	if cl.done {
		s.release(cl)
		return
	}
	cl.done = true
	if cl.deadline.Cancel() {
		cl.pending--
	}
	if IsIndeterminate(err) {
		s.stats.Indeterminate++
	}
	for _, o := range s.observers {
		o.OnReturn(cl.id, s.loop.Now(), resp, err)
	}
	// The answer as the client got it (which a phantom acknowledgement
	// makes differ from what the server applied).
	d := s.loop.Rec("kv.return", cl.client.name).Uint("call", cl.id).Err("err", err)
	switch {
	case err != nil:
	case cl.outRecorded && resp == cl.out:
		d.Raw(cl.outDetail) // the bytes kv.apply encoded for this very answer
	default:
		resp.AppendDetail(d)
	}
	d.End()
	// The reply may run the caller's task on, which may send its next
	// request on this very call object: release it first, touch it no more.
	reply := cl.reply
	s.release(cl)
	reply(ctx, resp, err)
}

func (s *Server) forget(cl *call) {
	for i, x := range s.inflight {
		if x == cl {
			s.inflight = append(s.inflight[:i], s.inflight[i+1:]...)
			return
		}
	}
}

// LeaderChange simulates an election: every request still travelling to the
// server is either applied by the old leader or lost (drawn per request), and
// every client with a request outstanding gets ErrLeaderChanged instead of its
// answer. For the election window no request is accepted. As in etcd, the new
// leader refreshes every lease's deadline, so no lease expires because of the
// election.
func (s *Server) LeaderChange(window time.Duration) {
	s.loop.Shared()
	s.loop.Rec("kv.leader-change", "").Uint("inflight", uint64(len(s.inflight))).Dur("window", window).End()
	s.stats.LeaderChanges++
	pending := s.inflight
	s.inflight = nil
	for _, cl := range pending {
		if cl.arriving {
			if cl.arrive.Cancel() {
				cl.pending--
			}
			cl.arriving = false
			if s.choices.Chance(0.5) {
				s.apply(cl.id, cl.req, nil)
				cl.applied = true
			}
		}
		if !cl.done {
			s.finishAfter(cl, s.latency(), Response{}, ErrLeaderChanged)
		}
		s.release(cl)
	}
	s.electionUntil = s.loop.Now().Add(window)
	s.tookOffice = s.electionUntil
	s.store.RefreshLeases(s.electionUntil)
	s.afterApply()
}

// ElectionUntil returns when the last election's new leader took office
// (zero before any): it refreshed every lease's deadline to that time plus
// the lease's TTL.
func (s *Server) ElectionUntil() simclock.Time { return s.tookOffice }

// Partition cuts the actor off from the cluster: its new requests are refused,
// answers to it are lost and its watch streams break.
func (s *Server) Partition(actor simclock.ActorID) {
	s.loop.Shared()
	if s.partitioned[actor] {
		return
	}
	s.partitioned[actor] = true
	s.loop.Log("kv.partition", s.loop.Name(actor), "")
	for _, w := range s.streams {
		if w.client.owner == actor && !w.closed {
			w.breakStream(ErrUnavailable)
		}
	}
}

// Heal reconnects the actor.
func (s *Server) Heal(actor simclock.ActorID) {
	s.loop.Shared()
	if !s.partitioned[actor] {
		return
	}
	delete(s.partitioned, actor)
	s.loop.Log("kv.heal", s.loop.Name(actor), "")
}

// Partitioned reports whether the actor is cut off.
func (s *Server) Partitioned(actor simclock.ActorID) bool { return s.partitioned[actor] }

// HealAll reconnects every actor and ends any election window.
func (s *Server) HealAll() {
	s.loop.Shared()
	s.partitioned = map[simclock.ActorID]bool{}
	s.electionUntil = 0
	s.loop.Log("kv.heal-all", "", "")
}

// applyStaleTxn is the StaleTxnCompare mutant: compares are judged against
// the store as it was one revision ago, the branch runs on the real store.
func (s *Server) applyStaleTxn(req Request) (Response, error) {
	rev := s.store.Revision() - 1
	if rev < s.store.CompactRevision() || rev < 1 {
		return s.store.Apply(s.loop.Now(), req)
	}
	stale := req.Txn.Compare
	ok := true
	for _, c := range stale {
		rr, err := s.store.Apply(s.loop.Now(), Request{Range: &RangeRequest{Key: c.Key, RangeEnd: c.RangeEnd, Revision: rev}})
		if err != nil || !compareHolds(c, rr.Range.Kvs) {
			ok = false
			break
		}
	}
	forced := TxnRequest{Success: req.Txn.Success, Failure: req.Txn.Failure}
	if !ok {
		forced.Success, forced.Failure = req.Txn.Failure, nil
	}
	resp, err := s.store.Apply(s.loop.Now(), Request{Txn: &forced})
	if err == nil && resp.Txn != nil {
		resp.Txn.Succeeded = ok
	}
	return resp, err
}

// phantomResponse fabricates a success answer for the PhantomAck mutant.
func phantomResponse(req Request, rev int64) Response {
	h := ResponseHeader{Revision: rev + 1}
	switch {
	case req.Put != nil:
		return Response{Put: &PutResponse{Header: h}}
	case req.DeleteRange != nil:
		return Response{DeleteRange: &DeleteRangeResponse{Header: h, Deleted: 1}}
	case req.Txn != nil:
		return Response{Txn: &TxnResponse{Header: h, Succeeded: true}}
	}
	return Response{Range: &RangeResponse{Header: ResponseHeader{Revision: rev}}}
}
