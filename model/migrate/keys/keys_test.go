package keys

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// userKey draws a valid user key (printable, never the separator).
func userKey(t *rapid.T, label string) string {
	return rapid.StringMatching(`[a-z0-9]{0,6}`).Draw(t, label)
}

// binaryKey draws a route key of any bytes (NUL included) that
// ValidRouteKey accepts.
func binaryKey(t *rapid.T, label string) string {
	k := string(rapid.SliceOfN(rapid.Byte(), 1, 6).Draw(t, label))
	if !ValidRouteKey(k) {
		return "x" + k
	}
	return k
}

func TestEncodeRoundTrips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := Family(rapid.IntRange(0, int(numFamilies)-1).Draw(t, "family"))
		uk := userKey(t, "uk")
		if lengthPrefixed[f] {
			uk = binaryKey(t, "binary")
		}
		sfx := string(rapid.SliceOfN(rapid.Byte(), 0, 4).Draw(t, "suffix"))
		sub := ""
		if umbrella[f] {
			sub = rapid.SampledFrom(Subs).Draw(t, "sub")
		}
		raw := EncodeSub(f, sub, uk, sfx)
		if f == FamilyUser && uk == "" {
			return
		}
		if got := Classify(raw); got != f {
			t.Fatalf("Classify(%q) = %s, want %s", raw, got, f)
		}
		if got := RouteKey(raw); got != uk {
			t.Fatalf("RouteKey(%q) = %q, want %q", raw, got, uk)
		}
		if !lengthPrefixed[f] {
			return
		}
		gf, gsub, guk, gsfx, ok := Parts(raw)
		if !ok || gf != f || gsub != sub || guk != uk || gsfx != sfx {
			t.Fatalf("Parts(%q) = %s %q %q %q %v", raw, gf, gsub, guk, gsfx, ok)
		}
		if len(raw) < len(KeyPrefix(f, sub, uk)) || raw[:len(KeyPrefix(f, sub, uk))] != KeyPrefix(f, sub, uk) {
			t.Fatalf("%q does not start with its key prefix", raw)
		}
	})
}

// A prefix scan of one user key's rows never finds another's, binary keys
// included: "q" and "q\x00r" are apart (seed 001, review rounds 1 and 4).
func TestKeyPrefixesAreDisjoint(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := binaryKey(t, "a"), binaryKey(t, "b")
		if a == b {
			return
		}
		pa := KeyPrefix(FamilyListDelta, "", a)
		rb := Encode(FamilyListDelta, b, string(rapid.SliceOfN(rapid.Byte(), 0, 12).Draw(t, "sfx")))
		if len(rb) >= len(pa) && rb[:len(pa)] == pa {
			t.Fatalf("%q's row %q lies under %q's prefix", b, rb, a)
		}
	})
}

// Rows laid out with a NUL separator (before the length prefix, or by a
// wrong writer) still route by the user key up to the NUL.
func TestLegacyRowsRoute(t *testing.T) {
	raw := FamilyListDelta.Prefix() + "q\x00r\x00" + "suffix"
	if Classify(raw) != FamilyListDelta || RouteKey(raw) != "q" {
		t.Fatalf("legacy row %q: %s %q", raw, Classify(raw), RouteKey(raw))
	}
	if RouteKey(FamilyListMeta.Prefix()+"q") != "q" {
		t.Fatal("legacy meta row")
	}
	if ValidRouteKey("") || ValidRouteKey("\x00q") || ValidRouteKey("!lst|meta|x") || !ValidRouteKey("q\x00r") {
		t.Fatal("ValidRouteKey")
	}
	if s := Exactly("q"); !s.Contains("q") || s.Contains("q\x00") || s.Contains("p") {
		t.Fatal("Exactly")
	}
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

func TestRouteSpan(t *testing.T) {
	p := KeyPrefix(FamilyListDelta, "", "q\x00r")
	if s, ok := RouteSpan(p, PrefixEnd(p)); !ok || s.Start != "q\x00r" || !s.Contains("q\x00r") {
		t.Fatalf("prefix range: %s %v", s, ok)
	}
	if s, ok := RouteSpan(Encode(FamilyListItem, "q", "\x00\x01"), ""); !ok || !s.Contains("q") || s.Contains("r") {
		t.Fatalf("point: %s %v", s, ok)
	}
	if _, ok := RouteSpan(p, PrefixEnd(p)+"x"); ok {
		t.Fatal("a range past one key's rows")
	}
	if _, ok := RouteSpan("a", "b"); ok {
		t.Fatal("a user-key range")
	}
}

// A staged key is the local staging prefix, the job as 16 hex digits, a
// bar and the raw key; Unstage takes exactly that job's keys apart.
func TestStageKeyLayout(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		job := rapid.Uint64().Draw(t, "job")
		raw := rapid.String().Draw(t, "raw")
		want := localPrefix + "migstage|" + fmt.Sprintf("%016x", job) + "|" + raw
		k := StageKey(job, raw)
		if k != want || StagePrefix(job)+raw != k {
			t.Fatalf("StageKey(%d, %q) = %q, want %q", job, raw, k, want)
		}
		dst := []byte(raw) // appending keeps what dst held
		if got := string(AppendStagePrefix(dst, job)); got != raw+localPrefix+"migstage|"+fmt.Sprintf("%016x|", job) {
			t.Fatalf("AppendStagePrefix(%q, %d) = %q", raw, job, got)
		}
		if got, ok := Unstage(job, k); !ok || got != raw {
			t.Fatalf("Unstage(%d, %q) = %q, %v", job, k, got, ok)
		}
		if _, ok := Unstage(job+1, k); ok {
			t.Fatalf("job %d's key %q unstaged as job %d's", job, k, job+1)
		}
		n := len(StagePrefix(job))
		bad := k[:n-1] + "/" + raw
		if _, ok := Unstage(job, bad); ok {
			t.Fatalf("%q unstaged", bad)
		}
		if _, ok := Unstage(job, k[:n-1]); ok {
			t.Fatal("a cut prefix unstaged")
		}
	})
}

// Classify answers FamilyUser at once for a key that does not start with
// '!': that holds only while every other family's prefix starts with it.
func TestFamilyPrefixesStartWithBang(t *testing.T) {
	for _, f := range append(Families(), FamilyLocal) {
		if p := f.Prefix(); f != FamilyUser && (p == "" || p[0] != '!') {
			t.Errorf("family %v's prefix %q does not start with '!'", f, p)
		}
	}
}

// EncodeSub and KeyPrefix build their keys in one buffer: the result must
// be the plain concatenation of the layout's parts.
func TestEncodeIsTheLayoutConcatenation(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := rapid.SampledFrom(Families()).Draw(t, "family")
		sub := rapid.SampledFrom(append([]string{""}, Subs...)).Draw(t, "sub")
		uk := rapid.String().Draw(t, "uk")
		suffix := rapid.String().Draw(t, "suffix")
		n := len(uk)
		lp := string([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
		want, wantPrefix := prefixes[f]+uk, prefixes[f]+uk
		switch {
		case f == FamilyUser:
			want, wantPrefix = uk, uk
		case lengthPrefixed[f] && umbrella[f]:
			want, wantPrefix = prefixes[f]+sub+lp+uk+suffix, prefixes[f]+sub+lp+uk
		case lengthPrefixed[f]:
			want, wantPrefix = prefixes[f]+lp+uk+suffix, prefixes[f]+lp+uk
		}
		if got := EncodeSub(f, sub, uk, suffix); got != want {
			t.Fatalf("EncodeSub(%v, %q, %q, %q) = %q, want %q", f, sub, uk, suffix, got, want)
		}
		if got := KeyPrefix(f, sub, uk); got != wantPrefix {
			t.Fatalf("KeyPrefix(%v, %q, %q) = %q, want %q", f, sub, uk, got, wantPrefix)
		}
	})
}

// IsKeyAfter recognises KeyAfter(k) and nothing else.
func TestIsKeyAfter(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.String().Draw(t, "k")
		end := rapid.String().Draw(t, "end")
		if !IsKeyAfter(KeyAfter(k), k) {
			t.Fatalf("KeyAfter(%q) not recognised", k)
		}
		if got, want := IsKeyAfter(end, k), end == KeyAfter(k); got != want {
			t.Fatalf("IsKeyAfter(%q, %q) = %v", end, k, got)
		}
		if IsKeyAfter(k+"\x00", k) || IsKeyAfter(k, k) {
			t.Fatalf("IsKeyAfter accepts a near miss of %q", k)
		}
	})
}

// InBracket classifies a key once: it must answer as the family test and
// the route-key test made apart.
func TestInBracketIsFamilyAndRouteKey(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := rapid.SampledFrom(append(Families(), FamilyLocal)).Draw(t, "family")
		raw := rapid.SampledFrom([]string{"", "k", "k5", "!dist|x", "!txn|lock|k3"}).Draw(t, "raw")
		if rapid.Bool().Draw(t, "encoded") {
			raw = Encode(rapid.SampledFrom(Families()).Draw(t, "as"), rapid.StringN(0, 6, -1).Draw(t, "uk"), rapid.StringN(0, 3, -1).Draw(t, "sfx"))
		}
		span := Span{Start: rapid.StringN(0, 3, -1).Draw(t, "start"), End: rapid.StringN(0, 3, -1).Draw(t, "end")}
		b := Bracket{Family: f, Raw: span}
		if got, want := InBracket(raw, b, span), Classify(raw) == f && span.Contains(RouteKey(raw)); got != want {
			t.Fatalf("InBracket(%q, %v, %v) = %v, want %v", raw, f, span, got, want)
		}
	})
}

// classifyAll is Classify trying every internal family's prefix, as it was
// first written.
func classifyAll(raw string) Family {
	if len(raw) >= len(localPrefix) && raw[:len(localPrefix)] == localPrefix {
		return FamilyLocal
	}
	best, bestLen := FamilyUser, 0
	for f := FamilyListMeta; f < numFamilies; f++ {
		p := prefixes[f]
		if len(p) > bestLen && len(raw) >= len(p) && raw[:len(p)] == p {
			best, bestLen = f, len(p)
		}
	}
	return best
}

// Classify tries only the families whose prefix shares the key's second
// byte: it must answer as trying them all, on keys made of prefixes, their
// cuts and extensions, and arbitrary bytes.
func TestClassifyMatchesTryingEveryFamily(t *testing.T) {
	var parts []string
	for _, f := range append(Families(), FamilyLocal) {
		p := f.Prefix()
		parts = append(parts, p)
		for i := 0; i < len(p); i++ {
			parts = append(parts, p[:i])
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		raw := rapid.SampledFrom(parts).Draw(t, "part") + rapid.SampledFrom(append(parts, "x", "\x00", "|")).Draw(t, "more") + rapid.String().Draw(t, "rest")
		if got, want := Classify(raw), classifyAll(raw); got != want {
			t.Fatalf("Classify(%q) = %v, want %v", raw, got, want)
		}
	})
}

// AppendStagePrefix writes the prefix, the job as sixteen hex digits and a
// bar after whatever b holds, as formatting them does.
func TestAppendStagePrefixMatchesFormatting(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		job := rapid.Uint64().Draw(t, "job")
		head := rapid.StringN(0, 5, -1).Draw(t, "head")
		want := head + fmt.Sprintf("%s%016x|", stagePrefix, job)
		if got := string(AppendStagePrefix([]byte(head), job)); got != want {
			t.Fatalf("AppendStagePrefix(%q, %d) = %q, want %q", head, job, got, want)
		}
		if got := StageKey(job, head); got != want[len(head):]+head {
			t.Fatalf("StageKey(%d, %q) = %q", job, head, got)
		}
	})
}

// AppendHex16 writes sixteen hex digits after whatever b holds, as %016x.
func TestAppendHex16MatchesFormatting(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := rapid.Uint64().Draw(t, "v")
		head := rapid.StringN(0, 5, -1).Draw(t, "head")
		if got, want := string(AppendHex16([]byte(head), v)), head+fmt.Sprintf("%016x", v); got != want {
			t.Fatalf("AppendHex16(%q, %d) = %q, want %q", head, v, got, want)
		}
	})
}

// StageSpan is the staged prefix and its PrefixEnd.
func TestStageSpanIsPrefixToPrefixEnd(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		job := rapid.Uint64().Draw(t, "job")
		p := StagePrefix(job)
		if got, want := StageSpan(job), (Span{Start: p, End: PrefixEnd(p)}); got != want {
			t.Fatalf("StageSpan(%d) = %v, want %v", job, got, want)
		}
	})
}

// Span.String (and so AppendTo) renders [start,end) with +inf for an open
// end and every byte outside printable ASCII as \xNN, as it did when built
// by concatenation; Quote escapes the same way.
func TestSpanStringMatchesItsFormat(t *testing.T) {
	quoteByFmt := func(s string) string {
		out := ""
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c > 0x7e {
				out += fmt.Sprintf(`\x%02x`, c)
			} else {
				out += string(rune(c))
			}
		}
		return out
	}
	rapid.Check(t, func(t *rapid.T) {
		s := Span{Start: rapid.String().Draw(t, "start"), End: rapid.String().Draw(t, "end")}
		end := quoteByFmt(s.End)
		if s.End == "" {
			end = "+inf"
		}
		want := "[" + quoteByFmt(s.Start) + "," + end + ")"
		if got := s.String(); got != want {
			t.Fatalf("%q.String() = %q, want %q", s, got, want)
		}
		if got := string(s.AppendTo([]byte("x="))); got != "x="+want {
			t.Fatalf("AppendTo = %q", got)
		}
		if got := Quote(s.Start); got != quoteByFmt(s.Start) {
			t.Fatalf("Quote(%q) = %q", s.Start, got)
		}
	})
}
