package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"shardsim/model/migrate/wire/wireref"
)

// TestReaderAgreesWithReference: on random records (good and bad
// headers; varints of every length up to eleven bytes, tenth bytes of
// several values, lengths either side of one byte and of what is left)
// read by random sequences of every read, Err and Close, going on
// after errors and after Close, Reader returns what wireref.Reader returns,
// has as many bytes left and the same error (the same message, wrapping
// ErrMalformed).
func TestReaderAgreesWithReference(t *testing.T) {
	var failed, read int
	rapid.Check(t, func(t *rapid.T) {
		for range 50 { // many records a check: rapid's first draws are small
			if readsAgree(t) {
				read++
			} else {
				failed++
			}
		}
	})
	if failed == 0 || read == 0 {
		t.Fatalf("%d runs failed and %d read: both cases must occur", failed, read)
	}
}

// FuzzReaderAgreesWithReference is TestReaderAgreesWithReference on any
// record and any reads: ops spells them, a letter a read (see
// readsAgreeOn), other letters ignored.
func FuzzReaderAgreesWithReference(f *testing.F) {
	f.Add([]byte{'T', 1, 5, 0x80, 1, 2, 1, 'a'}, []byte("uiubsC"))
	f.Add([]byte{'T', 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 3}, []byte("uCu"))
	f.Add([]byte{'T', 1, 0x80, 0x01, 'a'}, []byte("tcpE"))
	f.Fuzz(func(t *testing.T, rec, ops []byte) {
		readsAgreeOn(t, rec, ops)
	})
}

// readsAgree draws a record and reads, fails t unless Reader and
// wireref.Reader agree on them, and reports whether they read without error.
func readsAgree(t *rapid.T) bool {
	rec := []byte{'T', 1}
	if rapid.IntRange(0, 9).Draw(t, "header kind") == 0 { // short, or a wrong tag or version
		rec = rapid.SliceOfN(rapid.SampledFrom([]byte{'T', 'X', 1, 2}), 0, 2).Draw(t, "header")
	}
	for range rapid.IntRange(0, 12).Draw(t, "fields") {
		rec = append(rec, field(t)...)
	}
	return readsAgreeOn(t, rec, rapid.SliceOfN(rapid.SampledFrom([]byte("uibsptcEC")), 1, 20).Draw(t, "ops"))
}

// readsAgreeOn fails t unless Reader and the reference (wireref.Reader) agree on reading rec
// with ops, a letter a read: 'u' Uint, 'i' Int, 'b' Bool, 's' String, 'p'
// Bytes, 't' BytesInPlace, 'c' Count, 'E' Err, 'C' Close (other letters
// are no read). It reports whether the reads went without error.
func readsAgreeOn(t interface{ Fatalf(string, ...any) }, rec, ops []byte) bool {
	got, want := MakeReader(rec, 'T', 1), wireref.MakeReader(rec, 'T', 1)
	for k, op := range ops {
		var g, w any
		switch op {
		case 'u':
			g, w = got.Uint(), want.Uint()
		case 'i':
			g, w = got.Int(), want.Int()
		case 'b':
			g, w = got.Bool(), want.Bool()
		case 's':
			g, w = got.String(), string(want.Bytes())
		case 'p':
			p, q := got.Bytes(), want.Bytes()
			if len(q) == 0 {
				q = nil
			}
			g, w = fmt.Sprintf("%#v", p), fmt.Sprintf("%#v", q)
		case 't':
			p, q := got.BytesInPlace(), want.Bytes()
			if len(q) == 0 {
				q = nil
			}
			g, w = fmt.Sprintf("%#v", p), fmt.Sprintf("%#v", q)
		case 'c':
			g, w = got.Count(), want.Count()
		case 'E':
			g, w = fmt.Sprint(got.Err()), fmt.Sprint(want.Err())
		case 'C':
			g, w = fmt.Sprint(got.Close()), fmt.Sprint(want.Close())
		default:
			continue
		}
		if g != w || len(got.b)-got.off != want.Left() || fmt.Sprint(got.err) != fmt.Sprint(want.Err()) {
			t.Fatalf("record %x, reads %q: read %d (%c) gave %v, %d bytes left, error %v; the reference %v, %d, %v",
				rec, ops, k, op, g, len(got.b)-got.off, got.err, w, want.Left(), want.Err())
		}
		if got.err != nil && !errors.Is(got.err, ErrMalformed) {
			t.Fatalf("record %x: error %v does not wrap ErrMalformed", rec, got.err)
		}
	}
	return want.Err() == nil
}

// field draws the bytes of one field, good or not: a varint of up to
// eleven bytes (its last byte of several values, or cut), a byte that is
// or is not a bool, or a byte string whose length is near one byte's
// bound or near what follows.
func field(t *rapid.T) []byte {
	switch rapid.IntRange(0, 3).Draw(t, "field kind") {
	case 0:
		b := rapid.SliceOfN(rapid.ByteRange(0x80, 0xff), 0, 11).Draw(t, "continuations")
		return append(b, rapid.SampledFrom([]byte{0, 1, 2, 0x7f}).Draw(t, "last"))
	case 1:
		return rapid.SliceOfN(rapid.ByteRange(0x80, 0xff), 1, 11).Draw(t, "cut varint")
	case 2:
		return []byte{rapid.SampledFrom([]byte{0, 1, 2, 0x7f, 0x80, 0xff}).Draw(t, "byte")}
	}
	n := rapid.SampledFrom([]int{0, 1, 3, 127, 128, 129, 300}).Draw(t, "length")
	have := max(0, n+rapid.IntRange(-2, 1).Draw(t, "have"))
	return append(binary.AppendUvarint(nil, uint64(n)), make([]byte, have)...)
}
