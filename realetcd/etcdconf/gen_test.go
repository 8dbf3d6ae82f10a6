package etcdconf

import (
	"fmt"
	"math/rand/v2"

	"shardsim/simkv"
)

// gen draws random requests for one sequence. Every key lives under the
// sequence's prefix, so sequences run one after another on one server do
// not see each other's keys, except through from-key ranges, which only
// reach sequences not yet started. It reads the model store for the
// current and compacted revisions, so the requests it draws are the same
// whatever the real server does.
type gen struct {
	r         *rand.Rand
	seq       int
	prefix    string
	store     *simkv.Store
	leases    []int64 // ids granted by this sequence, live or not
	nextLease int64
}

func newGen(seed uint64, seq int, store *simkv.Store) *gen {
	return &gen{
		r:         rand.New(rand.NewPCG(seed, uint64(seq))),
		seq:       seq,
		prefix:    fmt.Sprintf("s%03d/", seq),
		store:     store,
		nextLease: int64(seq)*1000 + 1,
	}
}

var keyNames = []string{"a", "a/1", "a/2", "b", "b/1", "c", "d", "e", "f", "g"}
var values = []string{"", "v0", "v1", "v2", "zz", "a"}

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }
func (g *gen) pick(n int) int        { return g.r.IntN(n) }
func (g *gen) between(lo, hi int64) int64 {
	if hi < lo {
		return lo
	}
	return lo + g.r.Int64N(hi-lo+1)
}

func (g *gen) key() []byte   { return []byte(g.prefix + keyNames[g.pick(len(keyNames))]) }
func (g *gen) value() []byte { return []byte(values[g.pick(len(values))]) }

// prefixEnd is clientv3's GetPrefixRangeEnd.
func prefixEnd(p string) []byte {
	end := []byte(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return []byte{0}
}

// span draws a key range: a key, [k1, k2) (possibly empty or inverted), a
// prefix, the whole sequence, or from a key on.
func (g *gen) span() (key, end []byte) {
	switch n := g.pick(100); {
	case n < 35:
		return g.key(), nil
	case n < 55:
		return g.key(), g.key()
	case n < 70:
		k := g.key()
		return k, prefixEnd(string(k))
	case n < 85:
		return []byte(g.prefix), prefixEnd(g.prefix)
	default:
		return g.key(), []byte{0}
	}
}

func (g *gen) cur() int64     { return g.store.Revision() }
func (g *gen) compact() int64 { return g.store.CompactRevision() }

// rev draws a read revision: mostly current, sometimes historical,
// compacted, future or negative.
func (g *gen) rev() int64 {
	switch n := g.pick(100); {
	case n < 50:
		return 0
	case n < 60:
		return g.cur()
	case n < 90:
		return g.between(max(1, g.compact()-2), g.cur()+2)
	case n < 95:
		return g.between(max(1, g.compact()), g.cur())
	default:
		return -1
	}
}

func (g *gen) rangeReq() *simkv.RangeRequest {
	k, e := g.span()
	r := &simkv.RangeRequest{Key: k, RangeEnd: e, Revision: g.rev()}
	if g.chance(0.4) {
		r.Limit = g.between(-1, 4)
	}
	if g.chance(0.4) {
		r.SortOrder = simkv.SortOrder(g.pick(3))
		r.SortTarget = simkv.SortTarget(g.pick(5))
	}
	r.Serializable = g.chance(0.2)
	r.KeysOnly = g.chance(0.15)
	r.CountOnly = g.chance(0.1)
	filter := func() int64 {
		if g.chance(0.12) {
			return g.between(1, g.cur())
		}
		return 0
	}
	r.MinModRevision, r.MaxModRevision = filter(), filter()
	r.MinCreateRevision, r.MaxCreateRevision = filter(), filter()
	if g.chance(0.01) {
		r.Key = nil // ErrEmptyKey
	}
	if g.chance(0.03) {
		// The keys of the last few sequences too: past 12 kvs sort.Sort
		// leaves insertion sort, and the order of ties then depends on the
		// Go version etcd was built with. The runner compares such answers
		// with ties in key order; no limit, so no tie is cut off.
		r.Key, r.RangeEnd = []byte(fmt.Sprintf("s%03d/", max(0, g.seq-5))), prefixEnd(g.prefix)
		r.Limit = 0
		r.SortOrder = simkv.SortOrder(g.pick(3))
		r.SortTarget = simkv.SortTarget(g.pick(5))
	}
	if g.chance(0.01) {
		// The whole key space: big answers, but exact, since the model
		// holds every sequence's keys too.
		r.Key, r.RangeEnd, r.CountOnly = []byte{0}, []byte{0}, true
	}
	return r
}

func (g *gen) leaseID() int64 {
	if len(g.leases) == 0 || g.chance(0.1) {
		return g.between(1, 1<<40) // almost surely unknown
	}
	return g.leases[g.pick(len(g.leases))]
}

func (g *gen) putReq(key []byte) *simkv.PutRequest {
	p := &simkv.PutRequest{Key: key, Value: g.value(), PrevKv: g.chance(0.4)}
	if g.chance(0.3) {
		p.Lease = g.leaseID()
	}
	if g.chance(0.1) {
		p.IgnoreValue = true
		if g.chance(0.8) {
			p.Value = nil
		}
	}
	if g.chance(0.1) {
		p.IgnoreLease = true
		if g.chance(0.8) {
			p.Lease = 0
		}
	}
	if g.chance(0.01) {
		p.Key = nil
	}
	return p
}

func (g *gen) deleteReq() *simkv.DeleteRangeRequest {
	k, e := g.span()
	d := &simkv.DeleteRangeRequest{Key: k, RangeEnd: e, PrevKv: g.chance(0.5)}
	if g.chance(0.01) {
		d.Key = nil
	}
	return d
}

func (g *gen) compare() simkv.Compare {
	c := simkv.Compare{Result: simkv.CompareResult(g.pick(4)), Target: simkv.CompareTarget(g.pick(5)), Key: g.key()}
	switch n := g.pick(100); {
	case n < 15:
		c.Key, c.RangeEnd = g.span()
	case n < 17:
		c.Key = nil
	}
	switch c.Target {
	case simkv.CompareVersion:
		c.Version = g.between(0, 3)
	case simkv.CompareCreate:
		c.CreateRevision = g.between(0, g.cur()+1)
	case simkv.CompareMod:
		c.ModRevision = g.between(0, g.cur()+1)
	case simkv.CompareValue:
		c.Value = g.value()
	case simkv.CompareLease:
		if g.chance(0.5) {
			c.Lease = g.leaseID()
		}
	}
	return c
}

// txnReq draws a transaction. In strict mode its writes use distinct
// single keys drawn from pool, so most transactions pass etcd's duplicate
// key check; otherwise anything goes.
func (g *gen) txnReq(depth int, strict bool, pool *[]string) *simkv.TxnRequest {
	t := &simkv.TxnRequest{}
	for i := g.pick(4); i > 0; i-- {
		t.Compare = append(t.Compare, g.compare())
	}
	t.Success = g.ops(depth, strict, pool)
	t.Failure = g.ops(depth, strict, pool)
	return t
}

func (g *gen) writeKey(strict bool, pool *[]string) []byte {
	if !strict || len(*pool) == 0 {
		return g.key()
	}
	k := (*pool)[0]
	*pool = (*pool)[1:]
	return []byte(k)
}

func (g *gen) ops(depth int, strict bool, pool *[]string) []simkv.RequestOp {
	var ops []simkv.RequestOp
	for i := g.pick(5); i > 0; i-- {
		var op simkv.RequestOp
		switch n := g.pick(100); {
		case n < 35:
			op.Range = g.rangeReq()
		case n < 70:
			op.Put = g.putReq(g.writeKey(strict, pool))
		case n < 88:
			if strict {
				op.DeleteRange = &simkv.DeleteRangeRequest{Key: g.writeKey(strict, pool), PrevKv: g.chance(0.5)}
			} else {
				op.DeleteRange = g.deleteReq()
			}
		case n < 99:
			if depth < 2 {
				op.Txn = g.txnReq(depth+1, strict, pool)
			} else {
				op.Range = g.rangeReq()
			}
		default:
			// the empty union: etcd answers ErrKeyNotFound
		}
		ops = append(ops, op)
	}
	return ops
}

func (g *gen) txn() *simkv.TxnRequest {
	switch n := g.pick(1000); {
	case n < 5: // too many compares
		t := &simkv.TxnRequest{}
		for i := 0; i < simkv.DefaultMaxTxnOps+1; i++ {
			t.Compare = append(t.Compare, simkv.Compare{Key: g.key()})
		}
		return t
	case n < 10: // a nested txn over the budget its parent leaves
		outer := 60 + g.pick(10)
		t := &simkv.TxnRequest{}
		for i := 0; i < outer; i++ {
			t.Success = append(t.Success, simkv.RequestOp{Range: &simkv.RangeRequest{Key: g.key()}})
		}
		inner := &simkv.TxnRequest{}
		for i := 0; i < simkv.DefaultMaxTxnOps-outer+g.pick(2); i++ {
			inner.Failure = append(inner.Failure, simkv.RequestOp{Range: &simkv.RangeRequest{Key: g.key()}})
		}
		t.Success = append(t.Success, simkv.RequestOp{Txn: inner})
		return t
	}
	strict := g.chance(0.7)
	pool := make([]string, len(keyNames))
	for i, p := range g.r.Perm(len(keyNames)) {
		pool[i] = g.prefix + keyNames[p]
	}
	return g.txnReq(0, strict, &pool)
}

func (g *gen) grant() *simkv.LeaseGrantRequest {
	ttls := []int64{600, 3600, 100000}
	r := &simkv.LeaseGrantRequest{TTL: ttls[g.pick(len(ttls))]}
	switch n := g.pick(100); {
	case n < 80 || len(g.leases) == 0:
		r.ID = g.nextLease
		g.nextLease++
		g.leases = append(g.leases, r.ID)
	default:
		r.ID = g.leases[g.pick(len(g.leases))] // may still exist: ErrLeaseExist
	}
	if g.chance(0.03) {
		r.TTL = simkv.MaxLeaseTTL + g.between(1, 10)
	}
	return r
}

// shortGrant is a grant whose TTL is below the minimum; the runner revokes
// it at once so the real lease never expires during the test.
func (g *gen) shortGrant() *simkv.LeaseGrantRequest {
	r := &simkv.LeaseGrantRequest{ID: g.nextLease, TTL: g.between(-2, simkv.DefaultMinLeaseTTL+1)}
	g.nextLease++
	return r
}

func (g *gen) compactReq() *simkv.CompactRequest {
	r := &simkv.CompactRequest{Physical: g.chance(0.7)}
	if g.chance(0.8) {
		r.Revision = g.between(g.compact()+1, g.cur())
	} else {
		r.Revision = g.between(g.compact()-1, g.cur()+1)
	}
	return r
}

func (g *gen) watchReq(lastPhysical bool) simkv.WatchRequest {
	k, e := g.span()
	w := simkv.WatchRequest{Key: k, RangeEnd: e, PrevKv: g.chance(0.5)}
	switch n := g.pick(100); {
	case n < 35:
	case n < 50:
		w.StartRevision = g.cur() + 1
	case n < 60:
		w.StartRevision = g.cur()
	case n < 90:
		w.StartRevision = g.between(max(1, g.compact()), g.cur())
	case n < 95:
		w.StartRevision = g.between(1, max(1, g.compact()-1))
	default:
		w.StartRevision = g.cur() + g.between(2, 5)
	}
	// After a compaction that was not waited for, etcd may still hold the
	// compacted revision's deletes in its backend for a moment.
	if !lastPhysical && w.StartRevision == g.compact() {
		w.StartRevision++
	}
	if g.chance(0.3) {
		w.Filters = append(w.Filters, simkv.WatchFilter(g.pick(2)))
	}
	return w
}
