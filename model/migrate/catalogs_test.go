package migrate

import (
	"reflect"
	"testing"

	"shardsim/model/migrate/catalog"
)

// TestCatalogCacheDecodesAsDecode feeds the cache a run of snapshots (more
// than it holds, each several times, in a mixed order) and checks every
// answer against catalog.Decode of the same bytes; a malformed snapshot
// fails as Decode fails and is not kept.
func TestCatalogCacheDecodesAsDecode(t *testing.T) {
	cat := catalog.Catalog{Version: 1, NextRouteID: 2, Routes: []catalog.Route{{ID: 1, Start: ""}}}
	var snapshots [][]byte
	for i := 0; i < 2*catalogCacheSize+1; i++ {
		snapshots = append(snapshots, cat.Encode())
		next, _, err := cat.Fence(cat.Routes[len(cat.Routes)-1].ID, string(rune('a'+i)))
		if err != nil {
			t.Fatal(err)
		}
		if next, err = next.Unfence(next.Routes[len(next.Routes)-1].ID); err != nil {
			t.Fatal(err)
		}
		cat = next
	}
	var c catalogCache
	order := []int{0, 0, 1, 0, 2, 3, 4, 1, 5, 6, 7, 8, 0, 8, 3, 3, 7}
	for _, i := range order {
		got, err := c.decode(snapshots[i])
		want, werr := catalog.Decode(snapshots[i])
		if err != nil || werr != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("snapshot %d: cache gave %v, %v; Decode gives %v, %v", i, got, err, want, werr)
		}
	}
	bad := append([]byte(nil), snapshots[2]...)
	bad = bad[:len(bad)-1]
	for range 2 {
		if _, err := c.decode(bad); err == nil {
			t.Fatal("a truncated snapshot decoded")
		}
	}
	var none *catalogCache
	want, _ := catalog.Decode(snapshots[1])
	if got, err := none.decode(snapshots[1]); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("nil cache: %v, %v; want %v", got, err, want)
	}
}
