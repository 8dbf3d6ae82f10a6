package coord

import (
	"time"

	"shardsim/simkv"
)

// hookKV wraps a KV for scripted interleavings and crashes: it can run a
// function before a given write transaction goes out (another
// coordinator's whole operation, say), take the KV down after some writes
// (every later request fails with ErrUnavailable, as for a crashed or
// partitioned worker), lose the answer of chosen transactions, and it
// records the write transactions it sent.
type hookKV struct {
	inner simkv.KV
	// beforeWrite, if set, runs before the n-th write transaction (from 1).
	beforeWrite func(n int)
	// downAfter > 0 takes the KV down once that many write transactions
	// were applied.
	downAfter int
	// dropWrite, if set, drops the n-th write transaction unapplied and
	// reports ErrDeadlineExceeded when it returns true.
	dropWrite func(n int) bool
	// loseAnswer, if set, applies the n-th write transaction and reports
	// ErrDeadlineExceeded when it returns true.
	loseAnswer func(n int) bool
	// afterWrite, if set, runs after the n-th write transaction was
	// applied (or dropped), before its answer returns.
	afterWrite func(n int)
	// beforeRead, if set, runs before each read-only transaction goes out.
	beforeRead func(r *simkv.TxnRequest)
	writes     int
	down       bool
	sent       []simkv.TxnRequest
}

var _ simkv.KV = (*hookKV)(nil)

func isWriteTxn(r *simkv.TxnRequest) bool { return simkv.Request{Txn: r}.IsWrite() }

func (h *hookKV) Txn(r simkv.TxnRequest) (*simkv.TxnResponse, error) {
	if h.down {
		return nil, simkv.ErrUnavailable
	}
	if !isWriteTxn(&r) {
		if h.beforeRead != nil {
			h.beforeRead(&r)
		}
		return h.inner.Txn(r)
	}
	h.writes++
	n := h.writes
	if h.beforeWrite != nil {
		h.beforeWrite(n)
	}
	h.sent = append(h.sent, r)
	var resp *simkv.TxnResponse
	var err error
	if h.dropWrite != nil && h.dropWrite(n) {
		err = simkv.ErrDeadlineExceeded
	} else {
		resp, err = h.inner.Txn(r)
	}
	if h.afterWrite != nil {
		h.afterWrite(n)
	}
	if h.downAfter > 0 && n >= h.downAfter {
		h.down = true
	}
	if err == nil && h.loseAnswer != nil && h.loseAnswer(n) {
		return nil, simkv.ErrDeadlineExceeded
	}
	return resp, err
}

func (h *hookKV) Range(r simkv.RangeRequest) (*simkv.RangeResponse, error) {
	if h.down {
		return nil, simkv.ErrUnavailable
	}
	return h.inner.Range(r)
}

func (h *hookKV) Put(r simkv.PutRequest) (*simkv.PutResponse, error) {
	if h.down {
		return nil, simkv.ErrUnavailable
	}
	return h.inner.Put(r)
}

func (h *hookKV) DeleteRange(r simkv.DeleteRangeRequest) (*simkv.DeleteRangeResponse, error) {
	if h.down {
		return nil, simkv.ErrUnavailable
	}
	return h.inner.DeleteRange(r)
}

func (h *hookKV) Compact(r simkv.CompactRequest) (*simkv.CompactResponse, error) {
	if h.down {
		return nil, simkv.ErrUnavailable
	}
	return h.inner.Compact(r)
}

func (h *hookKV) LeaseGrant(r simkv.LeaseGrantRequest) (*simkv.LeaseGrantResponse, error) {
	if h.down {
		return nil, simkv.ErrUnavailable
	}
	return h.inner.LeaseGrant(r)
}

func (h *hookKV) LeaseRevoke(r simkv.LeaseRevokeRequest) (*simkv.LeaseRevokeResponse, error) {
	if h.down {
		return nil, simkv.ErrUnavailable
	}
	return h.inner.LeaseRevoke(r)
}

func (h *hookKV) LeaseKeepAlive(r simkv.LeaseKeepAliveRequest) (*simkv.LeaseKeepAliveResponse, error) {
	if h.down {
		return nil, simkv.ErrUnavailable
	}
	return h.inner.LeaseKeepAlive(r)
}

func (h *hookKV) LeaseTimeToLive(r simkv.LeaseTimeToLiveRequest) (*simkv.LeaseTimeToLiveResponse, error) {
	if h.down {
		return nil, simkv.ErrUnavailable
	}
	return h.inner.LeaseTimeToLive(r)
}

func (h *hookKV) Sleep(d time.Duration) { h.inner.Sleep(d) }
