package simkv

import "bytes"

// plan is a txn with its branch decided: etcd evaluates the compares of the
// txn and of every nested txn on the chosen path against the store as it was
// before the txn, before running any op (compareToPath). So a nested txn's
// compares never see the writes of the ops before it.
type plan struct {
	ok     bool
	ops    []RequestOp
	nested map[int]*plan // by index in ops; nil when there are none
}

// nestedAt returns the plan of the txn at ops[i], nil if that op is not a
// txn (without a map lookup in the common case of no nested txn).
func (p *plan) nestedAt(i int) *plan {
	if p.nested == nil {
		return nil
	}
	return p.nested[i]
}

// planTxn decides t's branch and those of the txns nested in it. The plan
// is returned as a value: a top-level txn's stays on the stack.
func (s *Store) planTxn(t *TxnRequest) plan {
	p := plan{ok: s.comparesHold(t.Compare)}
	p.ops = t.Success
	if !p.ok {
		p.ops = t.Failure
	}
	for i := range p.ops {
		if p.ops[i].Txn != nil {
			if p.nested == nil {
				p.nested = map[int]*plan{}
			}
			n := s.planTxn(p.ops[i].Txn)
			p.nested[i] = &n
		}
	}
	return p
}

// walk calls f on every non-txn op of the plan in execution order.
func (p *plan) walk(f func(op *RequestOp) error) error {
	for i := range p.ops {
		if n := p.nestedAt(i); n != nil {
			if err := n.walk(f); err != nil {
				return err
			}
			continue
		}
		if err := f(&p.ops[i]); err != nil {
			return err
		}
	}
	return nil
}

// isReadOnly is etcd's isTxnReadonly: only ranges in both top-level lists
// (a nested txn counts as a write).
func isReadOnly(t *TxnRequest) bool {
	for _, ops := range [][]RequestOp{t.Success, t.Failure} {
		for i := range ops {
			if ops[i].Range == nil {
				return false
			}
		}
	}
	return true
}

// applyTxn answers a top-level Txn the way etcd does: API checks, then the
// branch decision on the old state, then (for a txn that may write) every
// put's lease and ignore_* precondition on the chosen path, then every
// range's revision, and only then the ops. Any failing check fails the
// whole txn with no effect.
//
// A one-op answer goes into room if the request brought one that no
// earlier apply of it has taken.
func (s *Store) applyTxn(t *TxnRequest, room *txnRoom) (*TxnResponse, error) {
	if err := checkTxn(t, s.cfg.MaxTxnOps); err != nil {
		return nil, err
	}
	if err := checkListIntervals(t.Success); err != nil {
		return nil, err
	}
	if err := checkListIntervals(t.Failure); err != nil {
		return nil, err
	}
	p := s.planTxn(t)
	if !isReadOnly(t) {
		if err := p.walk(s.checkPutOp); err != nil {
			return nil, err
		}
	}
	if err := p.walk(s.checkRangeOp); err != nil {
		return nil, err
	}
	if err := s.checkIgnoreAfterDelete(&p); err != nil {
		return nil, err
	}
	w := s.newWriter()
	if n := writesIn(p.ops); n > 1 {
		// Room for one change per write, not regrown op by op (a range
		// delete may still need more).
		w.changes = make([]Event, 0, n)
	}
	resp := w.runPlan(&p, room)
	w.end()
	resp.Header.Revision = w.rev()
	return resp, nil
}

// checkPutOp is etcd's checkRequestPut, against the state before the txn.
func (s *Store) checkPutOp(op *RequestOp) error {
	p := op.Put
	if p == nil {
		return nil
	}
	if p.IgnoreValue || p.IgnoreLease {
		if _, ok := s.ks.atBytes(p.Key, s.rev); !ok {
			return ErrKeyNotFound
		}
	}
	if p.Lease != 0 && s.leases[p.Lease] == nil {
		return ErrLeaseNotFound
	}
	return nil
}

// checkRangeOp is etcd's checkRequestRange: an explicit revision must lie
// between the compaction and the revision before the txn. Unlike a
// top-level Range, a negative revision fails here when it is below the
// compacted revision.
func (s *Store) checkRangeOp(op *RequestOp) error {
	r := op.Range
	switch {
	case r == nil || r.Revision == 0:
		return nil
	case r.Revision > s.rev:
		return ErrFutureRev
	case r.Revision < s.compactRev:
		return ErrCompacted
	}
	return nil
}

// checkIgnoreAfterDelete finds the one txn etcd 3.4 accepts and then
// crashes on: an ignore_* put of a key that a from-key delete earlier in
// the txn removed (checkIntervals misses from-key deletes).
func (s *Store) checkIgnoreAfterDelete(p *plan) error {
	if !p.hasIgnorePut() {
		return nil // only an ignore_* put can fail the check
	}
	var seen []*RequestOp
	return p.walk(func(op *RequestOp) error {
		if put := op.Put; put != nil && (put.IgnoreValue || put.IgnoreLease) {
			exists := true // checkPutOp saw it live before the txn
			for _, prev := range seen {
				switch {
				case prev.Put != nil && string(prev.Put.Key) == string(put.Key):
					exists = true
				case prev.DeleteRange != nil && spanOf(prev.DeleteRange.Key, prev.DeleteRange.RangeEnd).contains(put.Key):
					exists = false
				}
			}
			if !exists {
				return ErrTxnWouldCrash
			}
		}
		seen = append(seen, op)
		return nil
	})
}

// hasIgnorePut reports whether any put of the plan, nested ones included,
// sets ignore_value or ignore_lease.
func (p *plan) hasIgnorePut() bool {
	for i := range p.ops {
		if n := p.nestedAt(i); n != nil {
			if n.hasIgnorePut() {
				return true
			}
			continue
		}
		if put := p.ops[i].Put; put != nil && (put.IgnoreValue || put.IgnoreLease) {
			return true
		}
	}
	return false
}

// runPlan runs the chosen ops in order. A nested txn's header revision is
// left 0: etcd never fills it in. A one-op answer is made in room when
// room is not nil and not yet taken.
func (w *writer) runPlan(p *plan, room *txnRoom) *TxnResponse {
	var resp *TxnResponse
	var puts []PutResponse
	if len(p.ops) == 1 && room.take() {
		resp, puts = room.answer(p.ok, putsIn(p.ops))
	} else {
		resp, puts = newTxnResponse(p.ok, len(p.ops), putsIn(p.ops))
	}
	for i := range p.ops {
		op := &p.ops[i]
		switch {
		case op.Range != nil:
			// Cannot fail: the revision was checked before the txn began.
			r, _ := w.s.rangeAt(op.Range, w.rev(), nil)
			resp.Responses[i].Range = r
		case op.Put != nil:
			resp.Responses[i].Put = w.putOp(op.Put, &puts[0])
			puts = puts[1:]
		case op.DeleteRange != nil:
			resp.Responses[i].DeleteRange = w.deleteOp(op.DeleteRange)
		case op.Txn != nil:
			resp.Responses[i].Txn = w.runPlan(p.nestedAt(i), nil)
		}
	}
	return resp
}

// newTxnResponse returns a txn's answer with room for the responses of its
// n ops, and the answers of its puts (nil when there are none). Protocol
// txns have one to four ops (coord's: one or three, most often; migrate's:
// one put, most often): their responses and put answers share the
// answer's allocation. A txn with puts gets room for n of them, so an
// answer whose ops are all puts (the common case) takes no more bytes than
// the separate allocations it replaces.
func newTxnResponse(ok bool, n, puts int) (*TxnResponse, []PutResponse) {
	var resp *TxnResponse
	var ops []ResponseOp
	var room []PutResponse
	switch {
	case n == 1 && puts == 0:
		a := &struct {
			resp TxnResponse
			ops  [1]ResponseOp
		}{}
		resp, ops = &a.resp, a.ops[:]
	case n == 1:
		a := &struct {
			resp TxnResponse
			ops  [1]ResponseOp
			puts [1]PutResponse
		}{}
		resp, ops, room = &a.resp, a.ops[:], a.puts[:]
	case n == 2 && puts == 0:
		a := &struct {
			resp TxnResponse
			ops  [2]ResponseOp
		}{}
		resp, ops = &a.resp, a.ops[:]
	case n == 2:
		a := &struct {
			resp TxnResponse
			ops  [2]ResponseOp
			puts [2]PutResponse
		}{}
		resp, ops, room = &a.resp, a.ops[:], a.puts[:]
	case n == 3 && puts == 0:
		a := &struct {
			resp TxnResponse
			ops  [3]ResponseOp
		}{}
		resp, ops = &a.resp, a.ops[:]
	case n == 3:
		a := &struct {
			resp TxnResponse
			ops  [3]ResponseOp
			puts [3]PutResponse
		}{}
		resp, ops, room = &a.resp, a.ops[:], a.puts[:]
	case n == 4 && puts == 0:
		a := &struct {
			resp TxnResponse
			ops  [4]ResponseOp
		}{}
		resp, ops = &a.resp, a.ops[:]
	case n == 4:
		a := &struct {
			resp TxnResponse
			ops  [4]ResponseOp
			puts [4]PutResponse
		}{}
		resp, ops, room = &a.resp, a.ops[:], a.puts[:]
	default:
		// Zero ops answer an empty, non-nil list, as they always have.
		resp, ops = &TxnResponse{}, make([]ResponseOp, n)
		if puts > 0 {
			room = make([]PutResponse, puts)
		}
	}
	resp.Succeeded, resp.Responses = ok, ops
	// Capped: a put answer is handed out by pointer, never appended to.
	return resp, room[:puts:puts]
}

// txnRoom is room for the answer to a txn of one op, made with its
// request. It is taken once: a request applied again (a model checker
// applies requests to store clones) gets a fresh answer, so no answer
// handed out is ever overwritten.
type txnRoom struct {
	taken bool
	resp  TxnResponse
	ops   [1]ResponseOp
	puts  [1]PutResponse
}

// take reports whether the room is there and not yet taken, and takes it.
func (r *txnRoom) take() bool {
	if r == nil || r.taken {
		return false
	}
	r.taken = true
	return true
}

// answer returns the room's answer to a one-op txn and the answers of
// its puts (none or one), as newTxnResponse does.
func (r *txnRoom) answer(ok bool, puts int) (*TxnResponse, []PutResponse) {
	r.resp.Succeeded, r.resp.Responses = ok, r.ops[:]
	return &r.resp, r.puts[:puts:puts]
}

// txnCall is a txn request of at most one op either way with room for its
// answer, in one allocation.
type txnCall struct {
	req  TxnRequest
	room txnRoom
}

// writesIn counts the puts and deletes among ops (not those of nested txns).
func writesIn(ops []RequestOp) int {
	n := 0
	for i := range ops {
		if ops[i].Put != nil || ops[i].DeleteRange != nil {
			n++
		}
	}
	return n
}

// putsIn counts the puts among ops (not those of nested txns).
func putsIn(ops []RequestOp) int {
	n := 0
	for i := range ops {
		if ops[i].Put != nil {
			n++
		}
	}
	return n
}

// comparesHold reports whether every compare holds on the current state.
func (s *Store) comparesHold(cs []Compare) bool {
	for i := range cs {
		var kvs []KeyValue
		if len(cs[i].RangeEnd) == 0 {
			// One key (the common compare): read in place, no copies.
			var one [1]KeyValue
			if kv, ok := s.ks.atBytes(cs[i].Key, s.rev); ok {
				one[0] = kv
				kvs = one[:]
			}
			if !compareHolds(cs[i], kvs) {
				return false
			}
			continue
		}
		if !s.rangeCompareHolds(&cs[i]) {
			return false
		}
	}
	return true
}

// rangeCompareHolds is compareHolds for a compare over a range, reading
// the versions in place.
func (s *Store) rangeCompareHolds(c *Compare) bool {
	empty := true
	for _, k := range s.ks.inRange(spanOf(c.Key, c.RangeEnd)) {
		if kv, ok := s.ks.at(k, s.rev); ok {
			empty = false
			if !compareKV(c, &kv) {
				return false
			}
		}
	}
	return !empty || compareHolds(*c, nil)
}

// compareHolds is etcd's applyCompare over the key-values a compare's range
// holds: every one must satisfy it. An empty range compares as one key with
// all-zero fields, except that a value compare on it always fails (there is
// no way to tell a missing value from an empty one).
func compareHolds(c Compare, kvs []KeyValue) bool {
	if len(kvs) == 0 {
		if c.Target == CompareValue {
			return false
		}
		return compareKV(&c, &KeyValue{})
	}
	for i := range kvs {
		if !compareKV(&c, &kvs[i]) {
			return false
		}
	}
	return true
}

// compareKV compares one key-value; unknown targets compare equal and
// unknown results hold, as in etcd.
func compareKV(c *Compare, kv *KeyValue) bool {
	var r int
	switch c.Target {
	case CompareValue:
		r = bytes.Compare(kv.Value, c.Value)
	case CompareCreate:
		r = cmpInt(kv.CreateRevision, c.CreateRevision)
	case CompareMod:
		r = cmpInt(kv.ModRevision, c.ModRevision)
	case CompareVersion:
		r = cmpInt(kv.Version, c.Version)
	case CompareLease:
		r = cmpInt(kv.Lease, c.Lease)
	}
	switch c.Result {
	case CompareEqual:
		return r == 0
	case CompareNotEqual:
		return r != 0
	case CompareGreater:
		return r > 0
	case CompareLess:
		return r < 0
	}
	return true
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
