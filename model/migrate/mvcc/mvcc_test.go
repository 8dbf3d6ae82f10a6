package mvcc

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
)

// randomStore fills a store with versions of user keys and internal rows.
func randomStore(t *rapid.T) *Store {
	s := New()
	n := rapid.IntRange(0, 60).Draw(t, "versions")
	for i := 0; i < n; i++ {
		uk := fmt.Sprintf("k%d", rapid.IntRange(0, 6).Draw(t, "uk"))
		f := keys.Family(rapid.IntRange(0, len(keys.Families())-1).Draw(t, "family"))
		raw := keys.Encode(f, uk, fmt.Sprint(rapid.IntRange(0, 1).Draw(t, "sfx")))
		v := Version{TS: hlc.TS(rapid.IntRange(1, 40).Draw(t, "ts")), Value: fmt.Sprint(i), Tombstone: rapid.IntRange(0, 4).Draw(t, "tomb") == 0}
		s.Put(raw, v)
	}
	return s
}

// export drains one bracket chunk by chunk, as the migrator does.
func export(s *Store, req ExportRequest, t *rapid.T) []Row {
	var out []Row
	for i := 0; i < 10_000; i++ {
		res := s.Export(req)
		out = append(out, res.Rows...)
		if res.Done {
			return out
		}
		req.After = res.Next
		// the cursor survives an opaque round trip
		c, err := DecodeCursor(req.After.Encode())
		if err != nil || c != req.After {
			t.Fatalf("cursor round trip: %+v -> %+v %v", req.After, c, err)
		}
	}
	t.Fatal("export never finished")
	return nil
}

// Chunked export with any chunk size and scan budget emits exactly the
// versions of the moving span in (low, high], every family, each once.
func TestExportIsExactlyOnce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := randomStore(t)
		span := keys.Span{Start: fmt.Sprintf("k%d", rapid.IntRange(0, 6).Draw(t, "start"))}
		low := hlc.TS(rapid.IntRange(0, 20).Draw(t, "low"))
		high := low + hlc.TS(rapid.IntRange(0, 30).Draw(t, "width"))
		rows := rapid.IntRange(1, 5).Draw(t, "rows")
		budget := rows + rapid.IntRange(0, 5).Draw(t, "budget")
		var got []Row
		for _, b := range keys.Brackets(span) {
			got = append(got, export(s, ExportRequest{Bracket: b, Span: span, Low: low, High: high, MaxRows: rows, Budget: budget}, t)...)
		}
		var want []Row
		for _, b := range keys.Brackets(span) {
			s.Ascend(b.Raw.Start, b.Raw.End, func(k string, vs []Version) bool {
				if keys.InBracket(k, b, span) {
					for _, v := range vs {
						if v.TS > low && v.TS <= high {
							want = append(want, Row{Key: k, Version: v})
						}
					}
				}
				return true
			})
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("export differs (-want +got):\n%s", d)
		}
	})
}

// The key-only cursor loses the rest of a key cut mid-history: the bug
// migrate.key-only-cursor, shown on one hot key.
func TestKeyOnlyCursorSkipsVersions(t *testing.T) {
	s := New()
	for ts := hlc.TS(1); ts <= 5; ts++ {
		s.Put("hot", Version{TS: ts, Value: fmt.Sprint(ts)})
	}
	span := keys.Span{Start: "a"}
	b := keys.BracketFor(keys.FamilyUser, span)
	req := ExportRequest{Bracket: b, Span: span, High: 10, MaxRows: 2}
	var good, bad []Row
	for r := req; ; {
		res := s.Export(r)
		good = append(good, res.Rows...)
		if res.Done {
			break
		}
		r.After = res.Next
	}
	r := req
	r.Mode = ExportKeyCursor
	for {
		res := s.Export(r)
		bad = append(bad, res.Rows...)
		if res.Done {
			break
		}
		r.After = res.Next
	}
	if len(good) != 5 || len(bad) != 2 {
		t.Fatalf("versions cursor exported %d, key-only cursor %d (want 5 and 2)", len(good), len(bad))
	}
}

func TestReadVisibleExportDropsHistoryAndTombstones(t *testing.T) {
	s := New()
	s.Put("a", Version{TS: 1, Value: "1"})
	s.Put("a", Version{TS: 2, Value: "2"})
	s.Put("b", Version{TS: 1, Value: "1"})
	s.Put("b", Version{TS: 3, Tombstone: true})
	span := keys.Span{Start: "a"}
	res := s.Export(ExportRequest{Bracket: keys.BracketFor(keys.FamilyUser, span), Span: span, High: 5, MaxRows: 10, Mode: ExportReadVisible})
	if len(res.Rows) != 1 || res.Rows[0].Key != "a" || res.Rows[0].TS != 2 {
		t.Fatalf("rows %+v", res.Rows)
	}
}

// A scan budget counts rejected rows, so a sparse bracket still advances.
func TestExportBudgetAdvancesOverRejectedRows(t *testing.T) {
	s := New()
	for i := 0; i < 10; i++ {
		s.Put(fmt.Sprintf("a%d", i), Version{TS: 1})
	}
	s.Put("z", Version{TS: 1})
	span := keys.Span{Start: "m"}
	b := keys.BracketFor(keys.FamilyUser, keys.Span{Start: "a"})
	res := s.Export(ExportRequest{Bracket: b, Span: span, High: 5, MaxRows: 1, Budget: 3})
	if len(res.Rows) != 0 || res.Done || res.Scanned != 3 || res.Next.Key != "a2" {
		t.Fatalf("chunk %+v", res)
	}
}

func TestMergedReads(t *testing.T) {
	s := New()
	st := Staging{Active: true, Job: 1}
	s.Put(keys.StageKey(1, "k"), Version{TS: 10, Value: "staged"})
	s.Put("k", Version{TS: 20, Value: "live"})
	s.Put(keys.StageKey(1, "d"), Version{TS: 30, Tombstone: true})
	s.Put("d", Version{TS: 5, Value: "old"})
	s.Put(keys.StageKey(1, "x"), Version{TS: 5, Value: "v", ExpireAt: 8})
	cases := []struct {
		key   string
		ts    hlc.TS
		mode  ReadMode
		found bool
		value string
	}{
		{"k", 15, MergeNewest, true, "staged"},
		{"k", 25, MergeNewest, true, "live"},
		{"k", 25, StagedFirst, true, "staged"}, // the wrong variant
		{"k", 5, MergeNewest, false, ""},
		{"d", 10, MergeNewest, true, "old"},
		{"d", 30, MergeNewest, false, ""}, // the staged tombstone wins by timestamp
		{"x", 7, MergeNewest, true, "v"},
		{"x", 8, MergeNewest, false, ""}, // expired
	}
	for _, c := range cases {
		r := s.Get(c.key, c.ts, st, c.mode)
		if r.Found != c.found || r.Found && r.Version.Value != c.value {
			t.Errorf("Get(%s@%d, mode %d) = %+v, want found=%v %q", c.key, c.ts, c.mode, r, c.found, c.value)
		}
	}
	if r := s.Get("k", 15, Staging{}, MergeNewest); r.Found {
		t.Error("staged rows visible without staging")
	}
	rows := s.Scan(keys.FamilyUser, keys.Span{Start: "a", End: "z"}, keys.Span{Start: "a", End: "z"}, 25, st, MergeNewest, 0)
	var got []string
	for _, r := range rows {
		got = append(got, r.Key+"="+r.Value)
	}
	if d := cmp.Diff([]string{"d=old", "k=live"}, got); d != "" {
		t.Fatalf("scan (-want +got):\n%s", d)
	}
}

func TestStoreEdits(t *testing.T) {
	s := New()
	if !s.Put("a", Version{TS: 2}) || s.Put("a", Version{TS: 2, Value: "x"}) {
		t.Fatal("Put add/replace")
	}
	s.Put("a", Version{TS: 1})
	s.Put("a", Version{TS: 3})
	if n := s.DeleteAtOrBelow("a", 2); n != 2 || s.Len() != 1 {
		t.Fatalf("DeleteAtOrBelow removed %d, %d left", n, s.Len())
	}
	if !s.Delete("a", 3) || s.Keys() != 0 || s.Delete("a", 3) {
		t.Fatal("Delete")
	}
	if _, err := DecodeCursor([]byte{9, 1}); err == nil {
		t.Fatal("a malformed cursor decoded")
	}
}

// TestGenChangesWithEveryEdit: a key's generation is 0 while absent and
// takes a new value at every edit of its versions (add, replace, delete,
// truncate, drop and re-add), and an edit of another key leaves it alone.
func TestGenChangesWithEveryEdit(t *testing.T) {
	s := New()
	seen := map[uint64]bool{}
	step := func(what string) {
		t.Helper()
		g := s.Gen("k")
		if g == 0 || seen[g] {
			t.Fatalf("after %s: gen %d is zero or was seen before", what, g)
		}
		seen[g] = true
	}
	if s.Gen("k") != 0 {
		t.Fatal("absent key has a generation")
	}
	s.Put("k", Version{TS: 10, Value: "a"})
	step("put")
	s.Put("k", Version{TS: 10, Value: "b"})
	step("replace")
	s.Put("k", Version{TS: 20, Value: "c"})
	s.Put("k", Version{TS: 30, Value: "d"})
	step("puts")
	before := s.Gen("k")
	s.Put("other", Version{TS: 5})
	s.Delete("other", 5)
	if s.Gen("k") != before {
		t.Fatal("an edit of another key changed k's generation")
	}
	if s.Delete("k", 11) || s.Gen("k") != before {
		t.Fatal("a delete that removed nothing changed the generation")
	}
	s.Delete("k", 30)
	step("delete")
	s.DeleteBelow("k", 20)
	step("delete below")
	c := s.Clone()
	if c.Gen("k") != s.Gen("k") {
		t.Fatal("clone lost the generation")
	}
	s.DeleteAtOrBelow("k", 20)
	if s.Gen("k") != 0 {
		t.Fatal("dropped key keeps a generation")
	}
	s.Put("k", Version{TS: 40})
	step("re-add")
}

// TestKeyViewSame: two views are the same exactly when a read sees the same
// live and staged versions, with staging on or off alike, whatever store
// or staging job they come from; and a view reads as Get does.
func TestKeyViewSame(t *testing.T) {
	a, b := New(), New()
	for _, s := range []*Store{a, b} {
		s.Put("k", Version{TS: 10, Value: "x"})
	}
	a.Put(keys.StageKey(1, "k"), Version{TS: 20, Value: "y"})
	b.Put(keys.StageKey(2, "k"), Version{TS: 20, Value: "y"})
	on1, on2 := StagingOf(true, 1), StagingOf(true, 2)
	if !a.View("k", on1).Same(b.View("k", on2)) {
		t.Error("the same versions under two jobs are not the same view")
	}
	if a.View("k", on1).Same(a.View("k", Staging{})) {
		t.Error("staging on and off are the same view")
	}
	b.Put(keys.StageKey(2, "k"), Version{TS: 20, Value: "z"})
	if a.View("k", on1).Same(b.View("k", on2)) {
		t.Error("views differing in a staged value are the same")
	}
	b.Put("k", Version{TS: 5, Value: "w"})
	if a.View("k", Staging{}).Same(b.View("k", Staging{})) {
		t.Error("views differing in live versions are the same")
	}
	for _, ts := range []hlc.TS{1, 10, 15, 20, 30} {
		if got, want := a.View("k", on1).Get(ts, MergeNewest), a.Get("k", ts, on1, MergeNewest); got != want {
			t.Errorf("view read at %d: %+v, Get %+v", ts, got, want)
		}
	}
}

// Key records are carved from shared chunks: keys filled in an interleaved
// order, some dropped and put again, must each keep exactly their own
// versions.
func TestRecordsOfKeysStayApart(t *testing.T) {
	s := New()
	const keys = 101 // several chunks of records (see package slab)
	key := func(i int) string { return fmt.Sprintf("k%03d", i) }
	for round := 1; round <= 3; round++ {
		for i := 0; i < keys; i++ {
			s.Put(key(i), Version{TS: hlc.TS(round*1000 + i), Value: fmt.Sprint(round, "/", i)})
		}
		for i := 0; i < keys; i += 7 {
			s.DeleteAtOrBelow(key(i), hlc.TS(round*1000+i)) // drop the key: a later Put takes a new record
		}
	}
	for i := 0; i < keys; i++ {
		vs := s.Versions(key(i))
		want := 3
		if i%7 == 0 {
			want = 0
		}
		if len(vs) != want {
			t.Fatalf("%s holds %d versions, want %d: %v", key(i), len(vs), want, vs)
		}
		for j, v := range vs {
			round := 3 - j
			if v.TS != hlc.TS(round*1000+i) || v.Value != fmt.Sprint(round, "/", i) {
				t.Fatalf("%s version %d is %v, want round %d's", key(i), j, v, round)
			}
		}
	}
}

// StagedVersions finds exactly the versions StageKey names, whatever the
// lengths of the keys looked up before (the lookup key is built in a
// reused buffer).
func TestStagedVersionsMatchStageKey(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := New()
		raws := rapid.SliceOfN(rapid.StringN(0, 12, -1), 1, 8).Draw(t, "raws")
		for i, raw := range raws {
			job := uint64(i%3 + 1)
			s.Put(keys.StageKey(job, raw), Version{TS: hlc.TS(i + 1), Value: raw})
			s.Put(raw, Version{TS: hlc.TS(100 + i), Value: "live"})
		}
		for _, raw := range rapid.SliceOfN(rapid.SampledFrom(append(raws, "zz", "")), 1, 20).Draw(t, "probes") {
			for job := uint64(0); job <= 4; job++ {
				got, want := s.StagedVersions(job, raw), s.Versions(keys.StageKey(job, raw))
				if !cmp.Equal(got, want) {
					t.Fatalf("StagedVersions(%d, %q) = %v, want %v", job, raw, got, want)
				}
				v := s.View(raw, StagingOf(true, job))
				if !cmp.Equal(v.staged, want) || !cmp.Equal(v.live, s.Versions(raw)) {
					t.Fatalf("View(%q, job %d) = %+v", raw, job, v)
				}
			}
		}
	})
}

// VersionsJoined finds what Versions finds for the joined key, whatever
// was looked up before in the reused buffer.
func TestVersionsJoinedMatchesVersions(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := New()
		ks := rapid.SliceOfN(rapid.StringN(0, 10, -1), 1, 10).Draw(t, "keys")
		for i, k := range ks {
			s.Put(k, Version{TS: hlc.TS(i + 1), Value: k})
		}
		for _, k := range rapid.SliceOfN(rapid.SampledFrom(append(ks, "nope")), 1, 20).Draw(t, "probes") {
			cut := rapid.IntRange(0, len(k)).Draw(t, "cut")
			if got, want := s.VersionsJoined(k[:cut], k[cut:]), s.Versions(k); !cmp.Equal(got, want) {
				t.Fatalf("VersionsJoined(%q, %q) = %v, want %v", k[:cut], k[cut:], got, want)
			}
		}
	})
}

// scanByGet is Scan without staging as it was first written: collect the
// keys of the raw range, then read each that lies in the bracket with Get.
func scanByGet(s *Store, f keys.Family, raw, span keys.Span, ts hlc.TS, mode ReadMode, limit int) []ScanRow {
	var out []ScanRow
	b := keys.Bracket{Family: f, Raw: raw}
	for _, k := range s.KeysIn(raw.Start, raw.End) {
		if !keys.InBracket(k, b, span) {
			continue
		}
		if r := s.Get(k, ts, Staging{}, mode); r.Found {
			out = append(out, ScanRow{Key: k, Version: r.Version})
			if limit > 0 && len(out) >= limit {
				break
			}
		}
	}
	return out
}

// A scan without staged rows reads in the walk (scanLive): it must agree
// with reading every candidate key by Get, on random stores, brackets,
// spans, timestamps and limits.
func TestLiveScanAgreesWithGets(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := randomStore(t)
		span := keys.Span{Start: fmt.Sprintf("k%d", rapid.IntRange(0, 6).Draw(t, "start"))}
		if rapid.Bool().Draw(t, "bounded") {
			span.End = fmt.Sprintf("k%d", rapid.IntRange(0, 7).Draw(t, "end"))
		}
		f := keys.Family(rapid.IntRange(0, len(keys.Families())-1).Draw(t, "family"))
		b := keys.BracketFor(f, span)
		ts := hlc.TS(rapid.IntRange(0, 45).Draw(t, "ts"))
		mode := ReadMode(rapid.IntRange(0, 1).Draw(t, "mode"))
		limit := rapid.IntRange(0, 4).Draw(t, "limit")
		got := s.Scan(f, b.Raw, span, ts, Staging{}, mode, limit)
		want := scanByGet(s, f, b.Raw, span, ts, mode, limit)
		if !cmp.Equal(got, want) {
			t.Fatalf("Scan = %v, want %v", got, want)
		}
	})
}

// A dropped key's record is handed to the next new key: that key holds
// exactly its own versions, at a generation no content of either key had,
// and the room the dropped key had grown serves it.
func TestDroppedRecordServesNextKey(t *testing.T) {
	s := New()
	for ts := hlc.TS(1); ts <= 6; ts++ {
		s.Put("a", Version{TS: ts, Value: fmt.Sprint("a", ts)})
	}
	s.Put("z", Version{TS: 1, Value: "z"})
	genA := s.Gen("a")
	if n := s.DeleteAtOrBelow("a", 6); n != 6 || s.Gen("a") != 0 || len(s.Versions("a")) != 0 {
		t.Fatalf("dropping a removed %d, left gen %d and %v", n, s.Gen("a"), s.Versions("a"))
	}
	s.Put("b", Version{TS: 9, Value: "b"})
	if vs := s.Versions("b"); len(vs) != 1 || vs[0] != (Version{TS: 9, Value: "b"}) {
		t.Fatalf("b holds %v", vs)
	}
	if g := s.Gen("b"); g <= genA || g <= s.Gen("z") {
		t.Fatalf("b's generation %d repeats an earlier one (a %d, z %d)", g, genA, s.Gen("z"))
	}
	for ts := hlc.TS(10); ts <= 13; ts++ {
		s.Put("b", Version{TS: ts, Value: fmt.Sprint("b", ts)})
	}
	if vs := s.Versions("b"); len(vs) != 5 || vs[0].TS != 13 || vs[4].TS != 9 {
		t.Fatalf("b holds %v", vs)
	}
	if s.Len() != 6 || s.Keys() != 2 {
		t.Fatalf("store holds %d versions of %d keys, want 6 of 2", s.Len(), s.Keys())
	}
	s.Delete("b", 9)
	s.Delete("z", 1)
	s.Put("c", Version{TS: 20, Value: "c"})
	if vs := s.Versions("c"); len(vs) != 1 || vs[0].Value != "c" || len(s.Versions("z")) != 0 {
		t.Fatalf("c holds %v, z %v", vs, s.Versions("z"))
	}
}

// A clone's keys share one array of versions: edits of one key of the
// clone (puts that grow it, deletes, truncations) reach neither the
// clone's other keys nor the original.
func TestCloneKeysStayApart(t *testing.T) {
	s := New()
	key := func(i int) string { return fmt.Sprintf("k%02d", i) }
	for i := 0; i < 20; i++ {
		for v := 0; v <= i%4; v++ {
			s.Put(key(i), Version{TS: hlc.TS(10 + v), Value: fmt.Sprint(i, "/", v)})
		}
	}
	want := func(st *Store, i int, extra bool) {
		t.Helper()
		vs := st.Versions(key(i))
		n := i%4 + 1
		if extra {
			n++
		}
		if len(vs) != n {
			t.Fatalf("%s holds %v", key(i), vs)
		}
		for j, v := range vs[len(vs)-(i%4+1):] {
			if w := i%4 - j; v.TS != hlc.TS(10+w) || v.Value != fmt.Sprint(i, "/", w) {
				t.Fatalf("%s version %d is %v", key(i), j, v)
			}
		}
	}
	c := s.Clone()
	for i := 0; i < 20; i += 2 {
		c.Put(key(i), Version{TS: 100, Value: "new"})
	}
	c.Delete(key(3), 10)
	c.DeleteBelow(key(7), 12)
	for i := 0; i < 20; i++ {
		want(s, i, false)
		switch {
		case i%2 == 0:
			want(c, i, true)
		case i != 3 && i != 7:
			want(c, i, false)
		}
	}
	if s.Len() == c.Len() {
		t.Fatalf("clone and original hold %d versions alike", s.Len())
	}
}

// TestUnwrittenStore: a new store has no key map until its first Put (see
// New); until then every read, delete, walk and clone answers as for an
// empty store, and its clone and itself take keys afterwards.
func TestUnwrittenStore(t *testing.T) {
	s := New()
	if s.vers != nil {
		t.Fatal("New made the key map up front")
	}
	if s.Len() != 0 || s.Keys() != 0 || s.Gen("k") != 0 || s.Versions("k") != nil {
		t.Fatal("an unwritten store is not empty")
	}
	if _, ok := s.Newest("k", 10); ok {
		t.Fatal("Newest found a version in an unwritten store")
	}
	if s.Delete("k", 10) || s.DeleteBelow("k", 10) != 0 || len(s.KeysIn("", "\xff")) != 0 {
		t.Fatal("an unwritten store deleted or listed something")
	}
	c := s.Clone()
	for _, st := range []*Store{s, c} {
		if !st.Put("k", Version{TS: 5, Value: "v"}) {
			t.Fatal("the first Put replaced a version")
		}
		if v, ok := st.Newest("k", 10); !ok || v.Value != "v" || st.Keys() != 1 || st.Len() != 1 {
			t.Fatalf("after Put: %v %v keys %d len %d", v, ok, st.Keys(), st.Len())
		}
	}
}
