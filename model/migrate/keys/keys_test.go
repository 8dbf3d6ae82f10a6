package keys

import (
	"testing"

	"pgregory.net/rapid"
)

// userKey draws a valid user key (printable, never the separator).
func userKey(t *rapid.T, label string) string {
	return rapid.StringMatching(`[a-z0-9]{0,6}`).Draw(t, label)
}

func TestEncodeRoundTrips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		uk := userKey(t, "uk")
		f := Family(rapid.IntRange(0, int(numFamilies)-1).Draw(t, "family"))
		sfx := rapid.StringMatching(`[0-9|]{0,4}`).Draw(t, "suffix")
		raw := Encode(f, uk, sfx)
		if f == FamilyUser && uk == "" {
			return
		}
		if got := Classify(raw); got != f {
			t.Fatalf("Classify(%q) = %s, want %s", raw, got, f)
		}
		if got := RouteKey(raw); got != uk {
			t.Fatalf("RouteKey(%q) = %q, want %q", raw, got, uk)
		}
	})
}

// Every row whose route key lies in a span has a raw key in its family's
// bracket, and InBracket accepts exactly those rows: what makes per-family
// export complete and exact.
func TestBracketsCoverExactlyTheirRows(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := userKey(t, "a"), userKey(t, "b")
		if a > b {
			a, b = b, a
		}
		span := Span{Start: a, End: b}
		if rapid.Bool().Draw(t, "unbounded") {
			span.End = ""
		}
		uk := userKey(t, "uk")
		f := Family(rapid.IntRange(0, int(numFamilies)-1).Draw(t, "family"))
		raw := Encode(f, uk, rapid.StringMatching(`[0-9]{1,3}`).Draw(t, "sfx"))
		in := span.Contains(uk)
		for _, br := range Brackets(span) {
			mine := InBracket(raw, br, span)
			if mine && br.Family != f {
				t.Fatalf("%q accepted by the %s bracket", raw, br.Family)
			}
			if br.Family == f && mine != in {
				t.Fatalf("%q (route key %q) in %s: bracket says %v", raw, uk, span, mine)
			}
			if mine && !br.Raw.Contains(raw) {
				t.Fatalf("%q belongs to bracket %s but lies outside its raw range %s", raw, br.Family, br.Raw)
			}
		}
	})
}

func TestLongestPrefixWins(t *testing.T) {
	raw := Encode(FamilyListDelta, "d", "7")
	if Classify(raw) != FamilyListDelta || RouteKey(raw) != "d" {
		t.Fatalf("delta row %q classified %s / %q", raw, Classify(raw), RouteKey(raw))
	}
	// The meta bracket's raw range holds delta rows; InBracket must not.
	span := Span{Start: "a", End: "z"}
	if !BracketFor(FamilyListMeta, span).Raw.Contains(raw) {
		t.Fatal("test premise: the meta bracket's raw range should contain the delta row")
	}
	if InBracket(raw, BracketFor(FamilyListMeta, span), span) {
		t.Fatal("a delta row was accepted by the meta bracket")
	}
}

func TestStagedKeysAndLocalFamily(t *testing.T) {
	s := StageKey(7, "!lst|itm|k\x001")
	raw, ok := Unstage(7, s)
	if !ok || raw != "!lst|itm|k\x001" || !IsStaged(s) || Classify(s) != FamilyLocal {
		t.Fatalf("staged key %q: %q %v %s", s, raw, ok, Classify(s))
	}
	if _, ok := Unstage(8, s); ok {
		t.Fatal("a staged key of job 7 unstaged as job 8's")
	}
	if InBracket(s, BracketFor(FamilyUser, Span{}), Span{}) {
		t.Fatal("a staged row belongs to the user bracket of the whole keyspace")
	}
	if !StageSpan(7).Contains(s) || StageSpan(8).Contains(s) {
		t.Fatal("stage spans")
	}
	if ValidUserKey("a\x00b") || ValidUserKey("!dist|x") || !ValidUserKey("k1") {
		t.Fatal("ValidUserKey")
	}
}

func TestKeyAfterIsolates(t *testing.T) {
	s := Span{Start: "k5", End: KeyAfter("k5")}
	if !s.Contains("k5") || s.Contains("k50") || s.Contains("k6") || s.Contains("k4") {
		t.Fatalf("span %s", s)
	}
	raw := Encode(FamilyListItem, "k5", "9")
	if !InBracket(raw, BracketFor(FamilyListItem, s), s) || !BracketFor(FamilyListItem, s).Raw.Contains(raw) {
		t.Fatal("the isolated key's internal rows fall outside its bracket")
	}
}

func TestSpanOverlaps(t *testing.T) {
	cases := []struct {
		a, b Span
		want bool
	}{
		{Span{"a", "c"}, Span{"b", "d"}, true},
		{Span{"a", "b"}, Span{"b", "c"}, false},
		{Span{"a", ""}, Span{"z", ""}, true},
		{Span{"c", ""}, Span{"a", "c"}, false},
	}
	for _, c := range cases {
		if c.a.Overlaps(c.b) != c.want || c.b.Overlaps(c.a) != c.want {
			t.Errorf("%s overlaps %s: want %v", c.a, c.b, c.want)
		}
	}
	if PrefixEnd("ab") != "ac" || PrefixEnd("a\xff") != "b" || PrefixEnd("\xff") != "" {
		t.Fatal("PrefixEnd")
	}
}
