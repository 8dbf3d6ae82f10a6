package simkv

import (
	"fmt"
	"time"

	"shardsim/simclock"
)

// Client is one actor's connection to a simulated etcd. Requests go through
// the server's faults; answers come back as events of the owning actor, so
// they die with it when it crashes and wait while it is paused.
type Client struct {
	server *Server
	owner  simclock.ActorID
	name   string
	idle   []*waiting // finished calls' records, for Call to reuse
}

// Connect returns a client owned by actor.
func (s *Server) Connect(owner simclock.ActorID) *Client {
	return &Client{server: s, owner: owner, name: s.loop.Name(owner)}
}

// Name returns the owning actor's name.
func (c *Client) Name() string { return c.name }

// Do sends req and calls reply exactly once with the answer or a transport
// error, as an event of the owning actor (never if the actor crashes first).
// It returns the call id the observers see.
func (c *Client) Do(ctx *simclock.Context, req Request, reply func(ctx *simclock.Context, resp Response, err error)) uint64 {
	return c.server.submit(ctx, c, req, reply)
}

// Call sends req from inside a task and parks the task until the answer.
// The record of the call (and its two callbacks) is reused once the answer
// is in: the server calls a reply exactly once, so nothing refers to it
// any more. A call whose task dies parked never returns, and its record is
// simply dropped.
func (c *Client) Call(t *simclock.Task, req Request) (Response, error) {
	var w *waiting
	if n := len(c.idle); n > 0 {
		w, c.idle = c.idle[n-1], c.idle[:n-1]
	} else {
		w = &waiting{c: c}
		w.doneFn = w.done
	}
	w.t, w.req = t, req
	t.AwaitOn(w)
	resp, err := w.resp, w.err
	*w = waiting{c: c, doneFn: w.doneFn}
	c.idle = append(c.idle, w)
	return resp, err
}

// waiting is a task's call in flight: the request, then its answer.
type waiting struct {
	c      *Client
	t      *simclock.Task
	req    Request
	resume simclock.Resumer
	resp   Response
	err    error
	doneFn func(ctx *simclock.Context, r Response, e error) // w.done, bound once
}

// Wait sends the request once the task is parked (simclock.Waiter).
func (w *waiting) Wait(resume simclock.Resumer) {
	w.resume = resume
	w.c.Do(w.t.Context(), w.req, w.doneFn)
}

func (w *waiting) done(_ *simclock.Context, r Response, e error) {
	w.resp, w.err = r, e
	w.resume.Resume(nil)
}

// In returns the synchronous KV view of the client for a task. It is one
// allocation: tasks that live for one request (a migrate owner query) ask
// for a view each.
func (c *Client) In(t *simclock.Task) KV {
	k := &taskKV{client: c, task: t}
	k.typed = typed{via: k}
	return k
}

// KV is etcd's KV and lease API in direct style. The same protocol code runs
// over a simulated client inside a task, over a bare Store in unit tests, and
// could run over a real etcd client.
type KV interface {
	Range(RangeRequest) (*RangeResponse, error)
	Put(PutRequest) (*PutResponse, error)
	DeleteRange(DeleteRangeRequest) (*DeleteRangeResponse, error)
	Txn(TxnRequest) (*TxnResponse, error)
	Compact(CompactRequest) (*CompactResponse, error)
	LeaseGrant(LeaseGrantRequest) (*LeaseGrantResponse, error)
	LeaseRevoke(LeaseRevokeRequest) (*LeaseRevokeResponse, error)
	LeaseKeepAlive(LeaseKeepAliveRequest) (*LeaseKeepAliveResponse, error)
	LeaseTimeToLive(LeaseTimeToLiveRequest) (*LeaseTimeToLiveResponse, error)
	// Sleep waits d on the caller's clock (backoff between retries).
	Sleep(d time.Duration)
}

// caller sends one union request and waits for its answer. The KVs
// implement it themselves, so a view needs no closure.
type caller interface {
	call(Request) (Response, error)
}

// typed adapts a caller to the KV methods; every method checks that the
// answer carries the field its request kind expects.
type typed struct{ via caller }

func (k typed) Range(r RangeRequest) (*RangeResponse, error) {
	var req Request
	if len(r.RangeEnd) == 0 {
		// One key, the common read: the request and its answer in one
		// allocation, not two.
		c := &rangeCall{req: r}
		req = Request{Range: &c.req, rangeRoom: &c.room}
	} else {
		own := r // the copy the call keeps (r itself stays on the stack)
		req = Request{Range: &own}
	}
	resp, err := k.via.call(req)
	if err != nil {
		return nil, err
	}
	return must(resp.Range, "range")
}

func (k typed) Put(r PutRequest) (*PutResponse, error) {
	resp, err := k.via.call(Request{Put: &r})
	if err != nil {
		return nil, err
	}
	return must(resp.Put, "put")
}

func (k typed) DeleteRange(r DeleteRangeRequest) (*DeleteRangeResponse, error) {
	resp, err := k.via.call(Request{DeleteRange: &r})
	if err != nil {
		return nil, err
	}
	return must(resp.DeleteRange, "delete_range")
}

func (k typed) Txn(r TxnRequest) (*TxnResponse, error) {
	var req Request
	if len(r.Success) <= 1 && len(r.Failure) <= 1 {
		// At most one op either way (migrate's common txn: one put):
		// the request and its answer in one allocation, not two.
		c := &txnCall{req: r}
		req = Request{Txn: &c.req, txnRoom: &c.room}
	} else {
		own := r // the copy the call keeps (r itself stays on the stack)
		req = Request{Txn: &own}
	}
	resp, err := k.via.call(req)
	if err != nil {
		return nil, err
	}
	return must(resp.Txn, "txn")
}

func (k typed) Compact(r CompactRequest) (*CompactResponse, error) {
	resp, err := k.via.call(Request{Compact: &r})
	if err != nil {
		return nil, err
	}
	return must(resp.Compact, "compact")
}

func (k typed) LeaseGrant(r LeaseGrantRequest) (*LeaseGrantResponse, error) {
	resp, err := k.via.call(Request{LeaseGrant: &r})
	if err != nil {
		return nil, err
	}
	return must(resp.LeaseGrant, "lease_grant")
}

func (k typed) LeaseRevoke(r LeaseRevokeRequest) (*LeaseRevokeResponse, error) {
	resp, err := k.via.call(Request{LeaseRevoke: &r})
	if err != nil {
		return nil, err
	}
	return must(resp.LeaseRevoke, "lease_revoke")
}

func (k typed) LeaseKeepAlive(r LeaseKeepAliveRequest) (*LeaseKeepAliveResponse, error) {
	resp, err := k.via.call(Request{LeaseKeepAlive: &r})
	if err != nil {
		return nil, err
	}
	return must(resp.LeaseKeepAlive, "lease_keepalive")
}

func (k typed) LeaseTimeToLive(r LeaseTimeToLiveRequest) (*LeaseTimeToLiveResponse, error) {
	resp, err := k.via.call(Request{LeaseTimeToLive: &r})
	if err != nil {
		return nil, err
	}
	return must(resp.LeaseTimeToLive, "lease_timetolive")
}

func must[T any](v *T, kind string) (*T, error) {
	if v == nil {
		return nil, fmt.Errorf("simkv: %s answer missing from response", kind)
	}
	return v, nil
}

// taskKV is a client's KV view for one task: each call parks the task.
type taskKV struct {
	typed
	client *Client
	task   *simclock.Task
}

func (k *taskKV) call(r Request) (Response, error) { return k.client.Call(k.task, r) }

func (k *taskKV) Sleep(d time.Duration) { k.task.Sleep(d) }
