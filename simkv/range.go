package simkv

import (
	"bytes"
	"sort"
)

// checkRange is etcd's API-layer validation of a RangeRequest.
func checkRange(r *RangeRequest) error {
	if len(r.Key) == 0 {
		return ErrEmptyKey
	}
	// etcd 3.5+ rejects unknown sort options; 3.4 crashes on an unknown
	// target, so rejecting is the only sane model.
	if r.SortOrder < SortNone || r.SortOrder > SortDescend ||
		r.SortTarget < SortByKey || r.SortTarget > SortByValue {
		return ErrInvalidSortOption
	}
	return nil
}

// readRev resolves the revision a range reads at, given the revision the
// reader is at (curRev), exactly as etcd's rangeKeys does.
func (s *Store) readRev(rev, curRev int64) (int64, error) {
	if rev > curRev {
		return 0, ErrFutureRev
	}
	if rev <= 0 {
		rev = curRev
	}
	if rev < s.compactRev {
		return 0, ErrCompacted
	}
	return rev, nil
}

// applyRange answers a top-level Range.
// The answer goes into room if the request brought one that no earlier
// apply of it has taken.
func (s *Store) applyRange(r *RangeRequest, room *rangeRoom) (*RangeResponse, error) {
	if err := checkRange(r); err != nil {
		return nil, err
	}
	return s.rangeAt(r, s.rev, room)
}

// rangeAt runs a Range for a reader at revision curRev (inside a write txn
// that is the txn's revision once it has written). It follows etcd 3.4's
// applier step by step, quirks included:
//   - the store fetches limit+1 keys in key order, unless a sort order or a
//     min/max revision filter is set, in which case it fetches all;
//   - Count is the number of keys in range before the filters, ignoring the
//     limit;
//   - a sort target other than KEY with order NONE sorts ascending, but the
//     limit+1 prefetch still applies (only the fetched keys are sorted);
//   - sorting uses sort.Sort, which is not stable: ties come out in the
//     order Go's pdqsort leaves them. This matches etcd 3.4.23 (built with
//     Go 1.19) for fewer than 50 sorted kvs; from 50 on pdqsort takes paths
//     whose tie order differs between that build and this Go. etcd promises
//     no order among ties, and neither does the model.
//
// A one-key answer is made in room when room is not nil and not yet taken.
func (s *Store) rangeAt(r *RangeRequest, curRev int64, room *rangeRoom) (*RangeResponse, error) {
	rev, err := s.readRev(r.Revision, curRev)
	if err != nil {
		return nil, err
	}
	limit := r.Limit
	if r.SortOrder != SortNone || r.MinModRevision != 0 || r.MaxModRevision != 0 ||
		r.MinCreateRevision != 0 || r.MaxCreateRevision != 0 {
		limit = 0
	}
	if limit > 0 {
		limit++
	} else {
		limit = 0 // no limit
	}
	var kvs []KeyValue
	var count int
	var resp *RangeResponse
	switch {
	case len(r.RangeEnd) == 0:
		// One key (the common read): no key copy, and the answer and
		// its key-value in one allocation. A limit (at least 2 after
		// the prefetch bump) cannot cut one key.
		one := room.take()
		if kv, ok := s.ks.atBytes(r.Key, rev); ok {
			count = 1
			if !r.CountOnly {
				if one == nil {
					one = &oneKeyRange{}
				}
				one.kv[0] = kv
				kvs = one.kv[:]
			}
		}
		if one != nil {
			resp = &one.resp
		}
	case r.CountOnly:
		_, count = s.ks.live(spanOf(r.Key, r.RangeEnd), rev, -1)
	default:
		kvs, count = s.ks.live(spanOf(r.Key, r.RangeEnd), rev, int(limit))
	}
	if r.MinModRevision != 0 || r.MaxModRevision != 0 || r.MinCreateRevision != 0 || r.MaxCreateRevision != 0 {
		kvs = pruneKVs(kvs, func(kv *KeyValue) bool {
			return (r.MaxModRevision != 0 && kv.ModRevision > r.MaxModRevision) ||
				(r.MinModRevision != 0 && kv.ModRevision < r.MinModRevision) ||
				(r.MaxCreateRevision != 0 && kv.CreateRevision > r.MaxCreateRevision) ||
				(r.MinCreateRevision != 0 && kv.CreateRevision < r.MinCreateRevision)
		})
	}
	order := r.SortOrder
	if r.SortTarget != SortByKey && order == SortNone {
		order = SortAscend
	}
	if order != SortNone {
		var sorter sort.Interface = kvSorter{kvs: kvs, target: r.SortTarget}
		if order == SortDescend {
			sorter = sort.Reverse(sorter)
		}
		sort.Sort(sorter)
	}
	if resp == nil {
		resp = &RangeResponse{}
	}
	*resp = RangeResponse{Header: ResponseHeader{Revision: curRev}, Count: int64(count)}
	if r.Limit > 0 && int64(len(kvs)) > r.Limit {
		kvs = kvs[:r.Limit]
		resp.More = true
	}
	if r.KeysOnly {
		for i := range kvs {
			kvs[i].Value = nil
		}
	}
	resp.Kvs = kvs
	return resp, nil
}

// oneKeyRange is the answer to a range that found one key, allocated
// together with that key's version.
type oneKeyRange struct {
	resp RangeResponse
	kv   [1]KeyValue
}

// rangeRoom is room for the answer to a one-key range, made with its
// request. It is taken once: a request applied again (a model checker
// applies requests to store clones) gets a fresh answer, so no answer
// handed out is ever overwritten.
type rangeRoom struct {
	taken bool
	one   oneKeyRange
}

// take returns the room's answer the first time it is asked, nil after
// that and for no room.
func (r *rangeRoom) take() *oneKeyRange {
	if r == nil || r.taken {
		return nil
	}
	r.taken = true
	return &r.one
}

// rangeCall is a one-key range request with room for its answer, in one
// allocation.
type rangeCall struct {
	req  RangeRequest
	room rangeRoom
}

// pruneKVs drops the kvs for which del is true, keeping the order.
func pruneKVs(kvs []KeyValue, del func(*KeyValue) bool) []KeyValue {
	out := kvs[:0]
	for i := range kvs {
		if !del(&kvs[i]) {
			out = append(out, kvs[i])
		}
	}
	return out
}

// kvSorter orders kvs ascending by one target, like etcd's kvSortBy* types.
type kvSorter struct {
	kvs    []KeyValue
	target SortTarget
}

func (k kvSorter) Len() int      { return len(k.kvs) }
func (k kvSorter) Swap(i, j int) { k.kvs[i], k.kvs[j] = k.kvs[j], k.kvs[i] }
func (k kvSorter) Less(i, j int) bool {
	a, b := &k.kvs[i], &k.kvs[j]
	switch k.target {
	case SortByVersion:
		return a.Version < b.Version
	case SortByCreateRevision:
		return a.CreateRevision < b.CreateRevision
	case SortByModRevision:
		return a.ModRevision < b.ModRevision
	case SortByValue:
		return bytes.Compare(a.Value, b.Value) < 0
	}
	return bytes.Compare(a.Key, b.Key) < 0
}
