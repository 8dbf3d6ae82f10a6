package etcdconf

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"shardsim/simkv"
)

// opMix draws the benchmark's operation mix: 50% ranges (a key, or a
// 10-key prefix with a limit), 30% puts, 20% compare-and-swap txns, over
// 100 keys. rev is the store's current revision, for the txn compares.
type opMix struct {
	r    *rand.Rand
	keys [][]byte
}

func newOpMix(seed uint64) *opMix {
	m := &opMix{r: rand.New(rand.NewPCG(seed, 0))}
	for i := 0; i < 100; i++ {
		m.keys = append(m.keys, []byte(fmt.Sprintf("bench/%02d", i)))
	}
	return m
}

func (m *opMix) next(rev int64) simkv.Request {
	k := m.keys[m.r.IntN(len(m.keys))]
	switch n := m.r.IntN(10); {
	case n < 3:
		return simkv.Request{Range: &simkv.RangeRequest{Key: k}}
	case n < 5:
		p := k[:len(k)-1]
		return simkv.Request{Range: &simkv.RangeRequest{Key: p, RangeEnd: prefixEnd(string(p)), Limit: 5}}
	case n < 8:
		return simkv.Request{Put: &simkv.PutRequest{Key: k, Value: []byte("value-0123456789")}}
	default:
		return simkv.Request{Txn: &simkv.TxnRequest{
			Compare: []simkv.Compare{{Key: k, Target: simkv.CompareMod, Result: simkv.CompareLess, ModRevision: rev + 1}},
			Success: []simkv.RequestOp{{Put: &simkv.PutRequest{Key: k, Value: []byte("swapped")}}},
			Failure: []simkv.RequestOp{{Range: &simkv.RangeRequest{Key: k}}},
		}}
	}
}

// doer runs one request somewhere and returns the revision after it.
type doer func(simkv.Request) int64

func modelDoer(tb testing.TB) doer {
	s := simkv.NewStore(simkv.StoreConfig{})
	return func(req simkv.Request) int64 {
		if _, err := s.Apply(0, req); err != nil {
			tb.Fatal(err)
		}
		return s.Revision()
	}
}

func etcdDoer(tb testing.TB) doer {
	c := newClient(tb, startEtcd(tb))
	return func(req simkv.Request) int64 {
		resp, err := c.do(req)
		if err != nil {
			tb.Fatal(err.Msg)
		}
		return resp.Header().Revision
	}
}

// runMix runs n operations of the mix and returns the ops per second.
func runMix(do doer, n int) float64 {
	m := newOpMix(1)
	rev := int64(1)
	start := time.Now()
	for i := 0; i < n; i++ {
		rev = do(m.next(rev))
	}
	return float64(n) / time.Since(start).Seconds()
}

// BenchmarkOpMix runs the same operation mix on simkv and on a real etcd
// (over loopback gRPC, one request at a time) and reports ops/s.
func BenchmarkOpMix(b *testing.B) {
	b.Run("simkv", func(b *testing.B) {
		do := modelDoer(b)
		b.ReportAllocs()
		b.ResetTimer()
		b.ReportMetric(runMix(do, b.N), "ops/s")
	})
	b.Run("etcd", func(b *testing.B) {
		do := etcdDoer(b)
		b.ResetTimer()
		b.ReportMetric(runMix(do, b.N), "ops/s")
	})
}

// TestOpMixRatio measures the mix on both for a fixed number of operations
// and logs the speed-up. It runs only with SHARDSIM_BENCH_RATIO=1.
func TestOpMixRatio(t *testing.T) {
	if os.Getenv("SHARDSIM_BENCH_RATIO") != "1" {
		t.Skip("set SHARDSIM_BENCH_RATIO=1 to measure simkv against etcd")
	}
	const n = 5000
	model := runMix(modelDoer(t), n)
	real := runMix(etcdDoer(t), n)
	t.Logf("simkv %.0f ops/s, etcd %.0f ops/s, ratio %.0f", model, real, model/real)
}
