package coord

import (
	"testing"

	"pgregory.net/rapid"
)

func TestDerivedIDs(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		run := RunID(rapid.Uint64().Draw(t, "run"))
		parent := ShardID(rapid.Uint64().Draw(t, "parent"))
		op := OpID(rapid.Uint64().Draw(t, "op"))
		idx := rapid.Uint32Range(0, maxSpawnedPerShard).Draw(t, "index")
		id := deriveShardID(run, parent, op, DerivedChild, idx)
		if !id.IsDerived() {
			t.Fatalf("derived id %s lacks bit 63", id)
		}
		if deriveShardID(run, parent, op, DerivedChild, idx) != id {
			t.Fatal("not deterministic")
		}
		// Each input separates: changing any one changes the id.
		for name, other := range map[string]ShardID{
			"run":    deriveShardID(run+1, parent, op, DerivedChild, idx),
			"parent": deriveShardID(run, parent+1, op, DerivedChild, idx),
			"op":     deriveShardID(run, parent, op+1, DerivedChild, idx),
			"kind":   deriveShardID(run, parent, op, DerivedResidual, idx),
			"index":  deriveShardID(run, parent, op, DerivedChild, idx+1),
		} {
			if other == id {
				t.Fatalf("changing %s did not change the id", name)
			}
		}
	})
}

func TestDerivedIDGolden(t *testing.T) {
	// Derived ids are persisted; this pins the derivation so a change to
	// it cannot pass unnoticed.
	got := deriveShardID(1, 2, 3, DerivedChild, 0)
	if !got.IsDerived() {
		t.Fatal("bit 63 clear")
	}
	const want = ShardID(0xea7f1869b1442bc3)
	if got != want {
		t.Fatalf("deriveShardID(1,2,3,child,0) = %#x, want %#x", uint64(got), uint64(want))
	}
}

func TestFindDerived(t *testing.T) {
	spawned := []ShardID{
		deriveShardID(run1, 1, 7, DerivedChild, 0),
		deriveShardID(run1, 1, 8, DerivedResidual, 1),
		deriveShardID(run1, 1, 7, DerivedChild, 2),
		deriveShardID(run1, 1, 7, DerivedChild, 9), // wrong index: not found
	}
	if at := findDerived(run1, 1, spawned, 7, DerivedChild); len(at) != 2 || at[0] != 0 || at[1] != 2 {
		t.Fatalf("children of op 7 at %v", at)
	}
	if at := findDerived(run1, 1, spawned, 8, DerivedResidual); len(at) != 1 || at[0] != 1 {
		t.Fatalf("residual of op 8 at %v", at)
	}
	if at := findDerived(run1, 1, spawned, 8, DerivedChild); len(at) != 0 {
		t.Fatalf("kind not separated: %v", at)
	}
}
