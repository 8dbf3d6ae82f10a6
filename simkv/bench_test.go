package simkv

import (
	"fmt"
	"testing"
)

// Benchmarks of the store alone. Each reports ops/s besides ns/op, so
// benchstat can compare runs on either.

func reportOps(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// benchStore returns a store holding n keys.
func benchStore(b *testing.B, n int) (*Store, [][]byte) {
	s := NewStore(StoreConfig{})
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("key/%06d", i))
		if _, err := s.Apply(0, Request{Put: &PutRequest{Key: keys[i], Value: []byte("initial")}}); err != nil {
			b.Fatal(err)
		}
	}
	return s, keys
}

func BenchmarkStorePut(b *testing.B) {
	s, keys := benchStore(b, 1000)
	val := []byte("value-0123456789")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Apply(0, Request{Put: &PutRequest{Key: keys[i%len(keys)], Value: val}}); err != nil {
			b.Fatal(err)
		}
	}
	reportOps(b)
}

// BenchmarkStoreTxn runs a compare-and-swap on a key's mod revision, the
// typical protocol transaction.
func BenchmarkStoreTxn(b *testing.B) {
	s, keys := benchStore(b, 1000)
	val := []byte("value-0123456789")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := keys[i%len(keys)]
		txn := &TxnRequest{
			Compare: []Compare{{Key: k, Target: CompareMod, Result: CompareLess, ModRevision: s.Revision() + 1}},
			Success: []RequestOp{{Put: &PutRequest{Key: k, Value: val}}},
			Failure: []RequestOp{{Range: &RangeRequest{Key: k}}},
		}
		if _, err := s.Apply(0, Request{Txn: txn}); err != nil {
			b.Fatal(err)
		}
	}
	reportOps(b)
}

// BenchmarkStoreRange reads a 10-key slice of a 1000-key store.
func BenchmarkStoreRange(b *testing.B) {
	s, keys := benchStore(b, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i % (len(keys) - 10)
		if _, err := s.Apply(0, Request{Range: &RangeRequest{Key: keys[j], RangeEnd: keys[j+10]}}); err != nil {
			b.Fatal(err)
		}
	}
	reportOps(b)
}
