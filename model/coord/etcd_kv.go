package coord

import (
	"errors"

	"shardsim/simkv"
)

// Requests to the KV. Reads, grants and keep-alives are safe to repeat, so
// a transport error is retried with backoff; what still fails after
// MaxAttempts is a transient infrastructure failure. A KV-semantics error
// (etcd refusing the request as such) is not retried: it means the backend
// built a bad request or the store is not what it should be.

// backoff sleeps on the KV's clock before attempt i (i >= 1): BackoffBase
// doubled per attempt, at most BackoffMax.
func (e *Etcd) backoff(i int) {
	d := e.cfg.BackoffMax
	if i-1 < 30 {
		d = min(e.cfg.BackoffBase<<(i-1), e.cfg.BackoffMax)
	}
	if d > 0 {
		e.kv.Sleep(d)
	}
}

// retry runs a repeatable request until it returns something other than a
// transport error. It returns nil, a transient *InfraError when the
// attempts ran out, or the request's own non-transport error.
func (e *Etcd) retry(label string, call func() error) error {
	var err error
	for i := 0; i < e.cfg.MaxAttempts; i++ {
		if i > 0 {
			e.backoff(i)
		}
		e.stats.Requests++
		if err = call(); err == nil || !simkv.IsTransport(err) {
			return err
		}
		e.stats.Transport++
	}
	return transient(label, "etcd unreachable after %d attempts: %v", e.cfg.MaxAttempts, err)
}

// infraOf turns a failed request into an infrastructure failure.
func infraOf(label string, err error) *InfraError {
	var infra *InfraError
	if errors.As(err, &infra) {
		return infra
	}
	return corrupt(label, "etcd refused the request: %v", err)
}

// read runs ranges together in one read-only transaction, so that they see
// one revision, and returns that revision and the answers in order.
func (e *Etcd) read(label string, reqs ...simkv.RangeRequest) (int64, []*simkv.RangeResponse, error) {
	ops := make([]simkv.RequestOp, len(reqs))
	for i := range reqs {
		ops[i] = simkv.RequestOp{Range: &reqs[i]}
	}
	resp, err := e.readOps(label, ops)
	if err != nil {
		return 0, nil, err
	}
	out := make([]*simkv.RangeResponse, len(reqs))
	for i := range out {
		out[i] = resp.Responses[i].Range
	}
	return resp.Header.Revision, out, nil
}

// readOps runs the range ops in one read-only transaction and checks that
// the answer holds a range for each.
func (e *Etcd) readOps(label string, ops []simkv.RequestOp) (*simkv.TxnResponse, error) {
	var resp *simkv.TxnResponse
	err := e.retry(label, func() (err error) {
		resp, err = e.kv.Txn(simkv.TxnRequest{Success: ops})
		return err
	})
	if err != nil {
		return nil, infraOf(label, err)
	}
	for i := range ops {
		if i >= len(resp.Responses) || resp.Responses[i].Range == nil {
			return nil, corrupt(label, "read transaction answered without range %d", i)
		}
	}
	return resp, nil
}

// getRoom and getRoom1 hold the request of a get of up to three keys (a
// shard, its owner binding and its run), or of one, in one allocation.
type getRoom struct {
	ops  [3]simkv.RequestOp
	reqs [3]simkv.RangeRequest
}

type getRoom1 struct {
	ops  [1]simkv.RequestOp
	reqs [1]simkv.RangeRequest
}

// get reads single keys at one revision; a missing key gives nil.
func (e *Etcd) get(label string, keys ...[]byte) (int64, []*simkv.KeyValue, error) {
	var ops []simkv.RequestOp
	var reqs []simkv.RangeRequest
	switch {
	case len(keys) == 1:
		room := &getRoom1{}
		ops, reqs = room.ops[:], room.reqs[:]
	case len(keys) <= 3:
		room := &getRoom{}
		ops, reqs = room.ops[:len(keys)], room.reqs[:len(keys)]
	default:
		ops, reqs = make([]simkv.RequestOp, len(keys)), make([]simkv.RangeRequest, len(keys))
	}
	for i, k := range keys {
		reqs[i] = simkv.RangeRequest{Key: k}
		ops[i] = simkv.RequestOp{Range: &reqs[i]}
	}
	resp, err := e.readOps(label, ops)
	if err != nil {
		return 0, nil, err
	}
	out := make([]*simkv.KeyValue, len(keys))
	for i := range out {
		out[i] = firstKV(resp.Responses[i].Range)
	}
	return resp.Header.Revision, out, nil
}

// firstKV returns the first key-value of a range's answer (in place: an
// answer belongs to the one request that asked for it), or nil.
func firstKV(r *simkv.RangeResponse) *simkv.KeyValue {
	if len(r.Kvs) == 0 {
		return nil
	}
	return &r.Kvs[0]
}

// countReq counts the keys of r without reading them.
func countReq(r keyRange) simkv.RangeRequest {
	return simkv.RangeRequest{Key: r.Start, RangeEnd: r.End, CountOnly: true}
}

// scan reads every key of r, page by page, all at one revision: rev, or
// the revision of the first page when rev is 0. A scan whose revision was
// compacted away under it starts over (when it chose the revision itself).
func (e *Etcd) scan(label string, r keyRange, rev int64) (int64, []simkv.KeyValue, error) {
	for restart := 0; ; restart++ {
		at, kvs, err := e.scanAt(label, r, rev)
		if !errors.Is(err, simkv.ErrCompacted) {
			return at, kvs, err
		}
		if rev != 0 || restart+1 >= e.cfg.MaxAttempts {
			return 0, nil, transient(label, "scan revision compacted: %v", err)
		}
	}
}

func (e *Etcd) scanAt(label string, r keyRange, rev int64) (int64, []simkv.KeyValue, error) {
	var out []simkv.KeyValue
	from := r.Start
	for {
		var resp *simkv.RangeResponse
		err := e.retry(label, func() (err error) {
			resp, err = e.kv.Range(simkv.RangeRequest{Key: from, RangeEnd: r.End, Limit: int64(e.cfg.PageSize), Revision: rev})
			return err
		})
		switch {
		case errors.Is(err, simkv.ErrCompacted):
			return 0, nil, err
		case err != nil:
			return 0, nil, infraOf(label, err)
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		if out == nil {
			out = resp.Kvs // the first page's answer is this scan's own: no copy
		} else {
			out = append(out, resp.Kvs...)
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return rev, out, nil
		}
		last := resp.Kvs[len(resp.Kvs)-1].Key
		from = append(append([]byte(nil), last...), 0)
	}
}
