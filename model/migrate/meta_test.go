package migrate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"shardsim/simkv"
)

// buildTxn allocates a transaction's parts together: it must build what
// appending them one by one builds, and no key may reach into another.
func TestBuildTxnMatchesPlainConstruction(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		key := rapid.StringN(0, 8, -1)
		var guards []guard
		for _, k := range rapid.SliceOfN(key, 0, 3).Draw(t, "guards") {
			guards = append(guards, guard{key: k, rev: rapid.Int64Range(0, 9).Draw(t, "rev")})
		}
		var ps putSet
		for _, k := range rapid.SliceOfN(key, 0, 4).Draw(t, "puts") {
			ps.put(k, []byte(k+"!"))
		}
		dels := rapid.SliceOfN(key, 0, 3).Draw(t, "dels")
		var want simkv.TxnRequest
		for _, g := range guards {
			want.Compare = append(want.Compare, simkv.Compare{Target: simkv.CompareMod, Result: simkv.CompareEqual, Key: []byte(g.key), ModRevision: g.rev})
		}
		for _, p := range ps.list() {
			want.Success = append(want.Success, simkv.RequestOp{Put: &simkv.PutRequest{Key: []byte(p.key), Value: p.val}})
		}
		for _, k := range dels {
			want.Success = append(want.Success, simkv.RequestOp{DeleteRange: &simkv.DeleteRangeRequest{Key: []byte(k)}})
		}
		got := buildTxn(guards, ps.list(), dels)
		if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("buildTxn differs:\n%s", d)
		}
		// Every key is capacity-capped: an append cannot reach the next.
		for _, c := range got.Compare {
			if cap(c.Key) != len(c.Key) {
				t.Fatalf("compare key %q has room to grow into another", c.Key)
			}
		}
		for _, op := range got.Success {
			if op.Put != nil && cap(op.Put.Key) != len(op.Put.Key) || op.DeleteRange != nil && cap(op.DeleteRange.Key) != len(op.DeleteRange.Key) {
				t.Fatalf("an operation's key has room to grow into another")
			}
		}
	})
}

// A put set keeps each key at the place of its first put with the value of
// its last, as a map with an order list does, whatever the number of keys.
func TestPutSetMatchesMapAndOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var ps putSet
		m := map[string][]byte{}
		var order []string
		for i, k := range rapid.SliceOfN(rapid.StringN(0, 2, -1), 0, 12).Draw(t, "puts") {
			v := []byte{byte(i)}
			ps.put(k, v)
			if _, ok := m[k]; !ok {
				order = append(order, k)
			}
			m[k] = v
		}
		if len(ps.list()) != len(order) {
			t.Fatalf("%d puts, want %d", len(ps.list()), len(order))
		}
		for i, k := range order {
			if ps.list()[i].key != k || !cmp.Equal(ps.list()[i].val, m[k]) || !cmp.Equal(ps.get(k), m[k]) {
				t.Fatalf("put %d is %q=%v (get %v), want %q=%v", i, ps.list()[i].key, ps.list()[i].val, ps.get(k), k, m[k])
			}
		}
		if ps.get("absent-key") != nil {
			t.Fatal("get of a key never put is not nil")
		}
	})
}
