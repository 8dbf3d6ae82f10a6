package coord

import "testing"

func TestCheckCursorUpdate(t *testing.T) {
	sp := spec("b", "m")
	unb := spec("", "")
	for _, tc := range []struct {
		name      string
		sp        ShardSpec
		old, next Cursor
		rules     CursorRules
		want      CursorViolation
	}{
		{"none to none", sp, Cursor{}, Cursor{}, CursorRules{}, CursorOK},
		{"none to key", sp, Cursor{}, cur("c"), CursorRules{}, CursorOK},
		{"forward", sp, cur("c"), cur("d"), CursorRules{}, CursorOK},
		{"same", sp, cur("c"), cur("c"), CursorRules{}, CursorOK},
		{"reset", sp, cur("c"), Cursor{}, CursorRules{}, CursorReset},
		{"regression", sp, cur("d"), cur("c"), CursorRules{}, CursorRegression},
		{"prefix sorts first", sp, cur("cc"), cur("c"), CursorRules{}, CursorRegression},
		{"at start", sp, Cursor{}, cur("b"), CursorRules{}, CursorOK},
		{"below start", sp, Cursor{}, cur("a"), CursorRules{}, CursorOutOfBounds},
		{"at end", sp, Cursor{}, cur("m"), CursorRules{}, CursorOutOfBounds},
		{"just below end", sp, Cursor{}, cur("lzzz"), CursorRules{}, CursorOK},
		{"unbounded", unb, Cursor{}, cur("\xff\xff"), CursorRules{}, CursorOK},
		{"require key", sp, Cursor{}, Cursor{Token: bs("t")}, CursorRules{RequireKey: true}, CursorMissingKey},
		{"require key after progress", sp, cur("c"), Cursor{}, CursorRules{RequireKey: true}, CursorMissingKey},
		{"regression allowed by bug", sp, cur("d"), cur("c"), CursorRules{SkipRegression: true}, CursorOK},
		{"bounds skipped by bug", sp, Cursor{}, cur("z"), CursorRules{SkipBounds: true}, CursorOK},
	} {
		if got := checkCursorUpdate(tc.sp, tc.old, tc.next, tc.rules); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestShardSpec(t *testing.T) {
	for _, tc := range []struct {
		sp   ShardSpec
		key  string
		in   bool
		form bool
	}{
		{spec("", ""), "a", true, true},
		{spec("", "b"), "a", true, true},
		{spec("", "b"), "b", false, true},
		{spec("b", ""), "a", false, true},
		{spec("b", ""), "b", true, true},
		{spec("b", "b"), "b", false, false},
		{spec("c", "b"), "b", false, false},
	} {
		if got := tc.sp.Contains([]byte(tc.key)); got != tc.in {
			t.Errorf("%q in [%q,%q) = %t", tc.key, tc.sp.Start, tc.sp.End, got)
		}
		if got := tc.sp.WellFormed(); got != tc.form {
			t.Errorf("[%q,%q) well-formed = %t", tc.sp.Start, tc.sp.End, got)
		}
	}
	a := ShardSpec{Start: []byte("a"), End: []byte("b"), Metadata: []byte("m")}
	c := a.Clone()
	c.Start[0] = 'z'
	if a.Start[0] != 'a' {
		t.Fatal("Clone shares bytes")
	}
}

func TestInputsAreCopied(t *testing.T) {
	// The caller's buffers must not reach stored records.
	w, _ := refWorld(t, DefaultConfig())
	l := w.acquire(1, w1)
	key := []byte("c")
	if _, _, err := w.c.Checkpoint(w.now, tenantA, l, Cursor{LastKey: key}, 1); err != nil {
		t.Fatal(err)
	}
	key[0] = 'z'
	if r := w.record(1); string(r.Cursor.LastKey) != "c" {
		t.Fatalf("stored cursor aliased the caller's buffer: %q", r.Cursor.LastKey)
	}
	res, _, _ := w.c.AcquireAndRestore(w.now+50, tenantA, ShardKey{run1, 1}, w2)
	res.Snapshot.Cursor.LastKey[0] = 'y'
	if r := w.record(1); string(r.Cursor.LastKey) != "c" {
		t.Fatal("snapshot aliased the stored cursor")
	}
}
