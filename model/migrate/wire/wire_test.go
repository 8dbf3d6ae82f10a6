package wire

import (
	"encoding/binary"
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
		r := MakeReader(w.Done(), 'T', 3)
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
		r := MakeReader(b, 'T', 1)
		_ = r.String()
		if err := r.Close(); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v", name, err)
		}
	}
	r := MakeReader([]byte{'T', 1, 1, 9}, 'T', 1)
	r.Uint()
	if r.Close() == nil {
		t.Error("trailing bytes accepted")
	}
}

// Small and boundary values round-trip through Uint's one-byte path and
// its several-byte path alike.
func TestUintBoundaries(t *testing.T) {
	vals := []uint64{0, 1, 0x7f, 0x80, 0xff, 0x3fff, 0x4000, 1<<63 - 1, 1<<64 - 1}
	w := NewWriter('T', 1)
	for _, v := range vals {
		w.Uint(v)
	}
	r := MakeReader(w.Done(), 'T', 1)
	for _, v := range vals {
		if got := r.Uint(); got != v {
			t.Fatalf("Uint = %d, want %d", got, v)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

// After the first error every read yields its zero value and consumes
// nothing, whatever bytes follow.
func TestErrorSticks(t *testing.T) {
	r := MakeReader([]byte{'T', 1, 2, 5, 6, 7}, 'T', 1) // 2 is no bool
	if r.Bool() {
		t.Fatal("bad bool read as true")
	}
	if u, i, s, c := r.Uint(), r.Int(), r.String(), r.Count(); u != 0 || i != 0 || s != "" || c != 0 {
		t.Fatalf("reads after an error: %d %d %q %d", u, i, s, c)
	}
	if err := r.Close(); !errors.Is(err, ErrMalformed) {
		t.Fatalf("Close = %v", err)
	}
	h := MakeReader([]byte{'X', 1, 5}, 'T', 1) // a wrong tag, then a byte Uint's fast path would take
	if u := h.Uint(); u != 0 || h.Err() == nil {
		t.Fatalf("Uint after a bad header = %d, %v", u, h.Err())
	}
}

// Ints, bools and byte strings round-trip through their one-byte paths and
// their longer ones alike: zigzag values either side of one byte, and
// strings either side of a one-byte length.
func TestIntAndBytesBoundaries(t *testing.T) {
	ints := []int64{0, -1, 1, 63, -64, 64, -65, 1<<62 - 1, -1 << 63}
	strs := []string{"", "a", string(make([]byte, 127)), string(make([]byte, 128)), string(make([]byte, 300))}
	w := NewWriter('T', 1)
	for _, v := range ints {
		w.Int(v)
		w.Bool(v < 0)
	}
	for _, s := range strs {
		w.String(s)
	}
	r := MakeReader(w.Done(), 'T', 1)
	for _, v := range ints {
		if got, neg := r.Int(), r.Bool(); got != v || neg != (v < 0) {
			t.Fatalf("Int, Bool = %d, %v, want %d, %v", got, neg, v, v < 0)
		}
	}
	for _, s := range strs {
		if got := r.String(); got != s {
			t.Fatalf("String of %d bytes read as %d bytes", len(s), len(got))
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	// A one-byte length longer than what is left is refused, not read.
	short := MakeReader([]byte{'T', 1, 3, 'a', 'b'}, 'T', 1)
	if s := short.String(); s != "" || !errors.Is(short.Err(), ErrMalformed) {
		t.Fatalf("short string = %q, %v", s, short.Err())
	}
}

// Uint and Int take and refuse what binary.Uvarint and binary.Varint do,
// on every run of up to eleven random continuation bytes, cut there or
// ended by each of a few bytes (so cut, ten- and eleven-byte varints and
// tenth bytes of several values all occur).
func TestVarintsAgreeWithBinary(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		run := rapid.SliceOfN(rapid.ByteRange(0x80, 0xff), 11, 11).Draw(t, "continuations")
		for n := range len(run) + 1 {
			for _, end := range [][]byte{nil, {0}, {1}, {2}, {3}, {0x7f}, {1, 5}} {
				varintAgrees(t, append(append([]byte(nil), run[:n]...), end...))
			}
		}
	})
}

// varintAgrees fails t unless Uint and Int read body as binary.Uvarint
// and binary.Varint do.
func varintAgrees(t *rapid.T, body []byte) {
	rec := append([]byte{'T', 1}, body...)
	wantU, nU := binary.Uvarint(body)
	u := MakeReader(rec, 'T', 1)
	if got := u.Uint(); (nU > 0) != (u.Err() == nil) || got != wantU || nU > 0 && u.off != 2+nU {
		t.Fatalf("Uint of %x = %d (offset %d, %v); binary.Uvarint %d, %d", body, got, u.off, u.Err(), wantU, nU)
	}
	wantI, nI := binary.Varint(body)
	i := MakeReader(rec, 'T', 1)
	if got := i.Int(); (nI > 0) != (i.Err() == nil) || got != wantI || nI > 0 && i.off != 2+nI {
		t.Fatalf("Int of %x = %d (offset %d, %v); binary.Varint %d, %d", body, got, i.off, i.Err(), wantI, nI)
	}
}
