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
		for _, k := range ps.order {
			want.Success = append(want.Success, simkv.RequestOp{Put: &simkv.PutRequest{Key: []byte(k), Value: ps.m[k]}})
		}
		for _, k := range dels {
			want.Success = append(want.Success, simkv.RequestOp{DeleteRange: &simkv.DeleteRangeRequest{Key: []byte(k)}})
		}
		got := buildTxn(guards, ps.m, ps.order, dels)
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
