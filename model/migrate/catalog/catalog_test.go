package catalog

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

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

// routeStringByFmt and catalogStringByFmt are String as it was written
// with fmt: the text (traced with every phase change) must not change.
func routeStringByFmt(r Route) string {
	s := fmt.Sprintf("r%d%s@g%d", r.ID, r.Span(), r.Group)
	if r.State != Active {
		s += " " + r.State.String()
	}
	if r.StagedVisible {
		s += fmt.Sprintf(" staged(j%d)", r.MigrationJob)
	}
	if r.MinWriteTSExclusive != 0 {
		s += " floor=" + r.MinWriteTSExclusive.String()
	}
	if r.MinReadTS != 0 {
		s += " minread=" + r.MinReadTS.String()
	}
	return s
}

func catalogStringByFmt(c Catalog) string {
	parts := make([]string, len(c.Routes))
	for i, r := range c.Routes {
		parts[i] = routeStringByFmt(r)
	}
	return fmt.Sprintf("v%d{%s}", c.Version, strings.Join(parts, " "))
}

// A catalog and its routes render byte for byte as fmt rendered them,
// every optional part on and off.
func TestStringMatchesFmt(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := Catalog{Version: rapid.Uint64().Draw(t, "version")}
		for i, n := 0, rapid.IntRange(0, 4).Draw(t, "routes"); i < n; i++ {
			r := Route{
				ID:    rapid.Uint64().Draw(t, "id"),
				Start: rapid.String().Draw(t, "start"),
				End:   rapid.String().Draw(t, "end"),
				Group: rapid.IntRange(-3, 1<<20).Draw(t, "group"),
				State: State(rapid.IntRange(0, 1).Draw(t, "state")),
			}
			if rapid.Bool().Draw(t, "staged") {
				r.StagedVisible, r.MigrationJob = true, rapid.Uint64().Draw(t, "job")
			}
			if rapid.Bool().Draw(t, "floor") {
				r.MinWriteTSExclusive = hlc.TS(rapid.Uint64().Draw(t, "floor_ts"))
			}
			if rapid.Bool().Draw(t, "minread") {
				r.MinReadTS = hlc.TS(rapid.Uint64().Draw(t, "minread_ts"))
			}
			if got, want := r.String(), routeStringByFmt(r); got != want {
				t.Fatalf("Route.String() = %q, want %q", got, want)
			}
			c.Routes = append(c.Routes, r)
		}
		if got, want := c.String(), catalogStringByFmt(c); got != want {
			t.Fatalf("Catalog.String() = %q, want %q", got, want)
		}
		if got := string(c.AppendTo([]byte("catalog="))); got != "catalog="+catalogStringByFmt(c) {
			t.Fatalf("AppendTo = %q", got)
		}
	})
}

// TestLookupIndexAgreesWithSearch compares LookupIndex with the lookup it
// replaced (sort.Search for the first route starting after the key, then
// the span test) on random sorted route tables, gaps and an unbounded last
// route included, and random keys.
func TestLookupIndexAgreesWithSearch(t *testing.T) {
	ref := func(c Catalog, rk string) (int, bool) {
		i := sort.Search(len(c.Routes), func(i int) bool { return c.Routes[i].Start > rk }) - 1
		if i >= 0 && c.Routes[i].Span().Contains(rk) {
			return i, true
		}
		return 0, false
	}
	rng := rand.New(rand.NewPCG(1, 2))
	key := func() string {
		b := make([]byte, rng.IntN(3))
		for i := range b {
			b[i] = byte('a' + rng.IntN(4))
		}
		return string(b)
	}
	for n := 0; n < 2000; n++ {
		var points []string
		for range rng.IntN(9) {
			points = append(points, key())
		}
		sort.Strings(points)
		points = slices.Compact(points)
		var c Catalog
		for i := 0; i < len(points); i++ {
			r := Route{ID: uint64(len(c.Routes) + 1), Start: points[i]}
			if i+1 < len(points) {
				r.End = points[i+1]
				if rng.IntN(3) == 0 {
					i++ // a gap: the next route starts at the point after this one's end
				}
			} else if rng.IntN(2) == 0 {
				break // no unbounded last route
			}
			c.Routes = append(c.Routes, r)
		}
		for range 20 {
			rk := key()
			gi, gok := c.LookupIndex(rk)
			wi, wok := ref(c, rk)
			if gi != wi || gok != wok {
				t.Fatalf("%v: LookupIndex(%q) = %d, %v; search gives %d, %v", c.Routes, rk, gi, gok, wi, wok)
			}
		}
	}
}
