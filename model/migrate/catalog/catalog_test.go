package catalog

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
)

func start() Catalog {
	return Catalog{Version: 1, NextRouteID: 3, Routes: []Route{
		{ID: 1, Start: "", End: "k", Group: 0},
		{ID: 2, Start: "k", End: "", Group: 1},
	}}
}

// The migration's catalog changes keep every snapshot valid and raise the
// version by one each.
func TestMigrationStepsStayValid(t *testing.T) {
	c := start()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	f, moving, err := c.Fence(2, "k5")
	if err != nil || f.Version != 2 || moving != 3 {
		t.Fatalf("fence: v%d moving=%d %v", f.Version, moving, err)
	}
	cut, err := f.Cutover(moving, 2, 7, hlc.Make(9, 0), hlc.Make(3, 0))
	if err != nil {
		t.Fatal(err)
	}
	clr, err := cut.ClearStaged(moving, false)
	if err != nil {
		t.Fatal(err)
	}
	unf, err := f.Unfence(moving)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range []Catalog{f, cut, clr, unf} {
		if err := x.Validate(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	r, ok := f.Lookup("k7")
	if !ok || r.ID != 3 || r.State != WriteFenced || r.Group != 1 {
		t.Fatalf("fenced lookup %s", r)
	}
	r, _ = cut.Lookup("k7")
	if r.Group != 2 || r.State != Active || !r.StagedVisible || r.MigrationJob != 7 || r.MinReadTS != hlc.Make(3, 0) {
		t.Fatalf("cutover lookup %s", r)
	}
	if cut.LastCutover != cut.Version || f.LastCutover != 0 || clr.LastCutover != cut.Version {
		t.Fatalf("cutover watermark: fence %d cutover %d (v%d) clear %d", f.LastCutover, cut.LastCutover, cut.Version, clr.LastCutover)
	}
	if got := cut.Intersecting(keys.Span{Start: "k3", End: "k7"}); len(got) != 2 || got[0].Group != 1 || got[1].Group != 2 {
		t.Fatalf("intersecting %v", got)
	}
	if r, _ := f.Lookup("k1"); r.ID != 2 || r.End != "k5" {
		t.Fatalf("left part %s", r)
	}
	if _, err := cut.Cutover(moving, 2, 7, 0, 0); err == nil {
		t.Fatal("cut over an Active route")
	}
	if _, _, err := c.Fence(2, "k"); err == nil {
		t.Fatal("fenced at the route's start")
	}
}

func TestOverlapIsInvalid(t *testing.T) {
	bad := start().AddRoute(Route{Start: "k5", End: "", Group: 2})
	if _, _, ok := bad.Overlap(); !ok {
		t.Fatal("overlap not found")
	}
	if err := bad.Validate(); err == nil {
		t.Fatal("an overlapping catalog validated")
	}
	gap := start()
	gap.Routes[1].Start = "l"
	if err := gap.Validate(); err == nil {
		t.Fatal("a catalog with a gap validated")
	}
}

func TestCodecRoundTrip(t *testing.T) {
	f, _, _ := start().Fence(2, "k5")
	got, err := Decode(f.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(f, got); d != "" {
		t.Fatal(d)
	}
	if _, err := Decode([]byte("{")); err == nil {
		t.Fatal("garbage decoded")
	}
	if v, err := DecodeVersion(f.Encode()); err != nil || v != f.Version {
		t.Fatalf("DecodeVersion = %d, %v, want %d", v, err, f.Version)
	}
	for _, bad := range []string{"{", "C", "C\x01\x05", "C\x02"} {
		if v, err := DecodeVersion([]byte(bad)); err == nil {
			t.Fatalf("DecodeVersion(%q) = %d, want an error", bad, v)
		}
	}
}
