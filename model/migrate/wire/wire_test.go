package wire

import (
	"errors"
	"testing"

	"pgregory.net/rapid"
)

func TestRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		u := rapid.Uint64().Draw(t, "u")
		i := rapid.Int64().Draw(t, "i")
		b := rapid.Bool().Draw(t, "b")
		s := rapid.String().Draw(t, "s")
		p := rapid.SliceOf(rapid.Byte()).Draw(t, "p")
		w := NewWriter('T', 3)
		w.Uint(u)
		w.Int(i)
		w.Bool(b)
		w.String(s)
		w.Bytes(p)
		r := NewReader(w.Done(), 'T', 3)
		gu, gi, gb, gs, gp := r.Uint(), r.Int(), r.Bool(), r.String(), r.Bytes()
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if gu != u || gi != i || gb != b || gs != s || string(gp) != string(p) {
			t.Fatalf("round trip changed a field")
		}
	})
}

func TestRejects(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty": nil, "tag": {'X', 1}, "version": {'T', 2}, "truncated": {'T', 1, 5, 'a'},
	} {
		r := NewReader(b, 'T', 1)
		_ = r.String()
		if err := r.Close(); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v", name, err)
		}
	}
	r := NewReader([]byte{'T', 1, 1, 9}, 'T', 1)
	r.Uint()
	if r.Close() == nil {
		t.Error("trailing bytes accepted")
	}
}
