package route

import (
	"testing"

	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/keys"
	"shardsim/simclock"
)

func cat(v, cutover uint64) catalog.Catalog {
	return catalog.Catalog{Version: v, LastCutover: cutover, NextRouteID: 2, Routes: []catalog.Route{{ID: 1, Group: int(v % 3)}}}
}

// A view only moves forward; the watermark follows the cutovers the view
// shows and the heartbeats, whichever is higher.
func TestViewMovesForwardOnly(t *testing.T) {
	e := New(0, cat(1, 0))
	if !e.Adopt(cat(3, 3), 30) || e.View.Version != 3 || e.WatchRev != 30 || e.Watermark != 3 {
		t.Fatalf("adopt v3: %+v", e)
	}
	if e.Adopt(cat(2, 0), 20) || e.View.Version != 3 || e.WatchRev != 30 {
		t.Fatal("an older snapshot moved the view back")
	}
	if e.Adopt(cat(3, 3), 31) {
		t.Fatal("the same version adopted twice")
	}
	e.SeeWatermark(7)
	e.SeeWatermark(5)
	if e.Watermark != 7 {
		t.Fatalf("watermark %d", e.Watermark)
	}
	e.Adopt(cat(4, 3), 40)
	if e.Watermark != 7 {
		t.Fatal("a view lowered the watermark")
	}
}

// Ownership answers are reused only for spans they cover, at a version at
// least the one asked for, until they expire, and not after a restart.
func TestOwnershipCache(t *testing.T) {
	e := New(0, cat(1, 0))
	routes := []catalog.Route{{ID: 1, Start: "", End: "k5", Group: 1}, {ID: 2, Start: "k5", Group: 2}}
	e.Cache(keys.Span{Start: "k1", End: "k9"}, routes, 4, simclock.Time(100), 0)
	got, ok := e.Cached(keys.Span{Start: "k2", End: "k3"}, 4, 50)
	if !ok || len(got) != 1 || got[0].Group != 1 {
		t.Fatalf("covered span: %v %v", got, ok)
	}
	if _, ok := e.Cached(keys.Span{Start: "k2", End: "k3"}, 5, 50); ok {
		t.Fatal("an answer older than the version asked for was reused")
	}
	if _, ok := e.Cached(keys.Span{Start: "k0", End: "k3"}, 4, 50); ok {
		t.Fatal("an answer reused for a span it does not cover")
	}
	if _, ok := e.Cached(keys.Span{Start: "k2", End: "k3"}, 4, 100); ok {
		t.Fatal("an expired answer was reused")
	}
	e.Restarted()
	if _, ok := e.Cached(keys.Span{Start: "k2", End: "k3"}, 4, 50); ok {
		t.Fatal("the cache survived a crash")
	}
}
