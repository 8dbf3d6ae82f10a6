package catalog

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"shardsim/model/migrate/keys"
)

// AppendIntersecting returns what Intersecting returns, after whatever dst
// held (left as it was), on random catalogs and spans.
func TestAppendIntersectingMatchesIntersecting(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := Catalog{Version: 1}
		bounds := rapid.SliceOfNDistinct(rapid.IntRange(1, 30), 0, 6, rapid.ID[int]).Draw(t, "bounds")
		prev := ""
		for i := 0; i <= len(bounds); i++ {
			end := ""
			if i < len(bounds) {
				end = fmt.Sprintf("k%02d", bounds[i])
			}
			if end != "" && end <= prev {
				continue
			}
			c.Routes = append(c.Routes, Route{ID: uint64(i + 1), Start: prev, End: end, Group: i % 3})
			prev = end
			if end == "" {
				break
			}
		}
		lo := fmt.Sprintf("k%02d", rapid.IntRange(0, 31).Draw(t, "lo"))
		span := keys.Span{Start: lo, End: keys.KeyAfter(lo)}
		if rapid.Bool().Draw(t, "scan") {
			span.End = fmt.Sprintf("k%02d", rapid.IntRange(0, 31).Draw(t, "hi"))
			if rapid.Bool().Draw(t, "open") {
				span.End = ""
			}
		}
		want := c.Intersecting(span)
		var buf [1]Route
		if got := c.AppendIntersecting(buf[:0], span); len(got) != len(want) || (len(want) > 0 && !cmp.Equal(got, want)) {
			t.Fatalf("span %v: %v, want %v", span, got, want)
		}
		head := Route{ID: 99, Start: "zz"}
		got := c.AppendIntersecting([]Route{head}, span)
		if got[0] != head || len(got) != 1+len(want) || (len(want) > 0 && !cmp.Equal(got[1:], want)) {
			t.Fatalf("after a held route, span %v: %v, want %v", span, got, want)
		}
	})
}
