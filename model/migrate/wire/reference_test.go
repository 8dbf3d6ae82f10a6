package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// refReader is the plainest reading of the format, written apart from
// Reader (as Reader was before it kept an offset and took fast paths):
// the rest of the record re-sliced after each field, every varint through
// encoding/binary, the first error kept and nothing read after it. Every
// decoder on wire (job, catalog, fsm's lock rows) is a sequence of these
// reads, so holding Reader to it holds them all to what they did.
type refReader struct {
	rest []byte
	err  error
}

func refMakeReader(b []byte, tag, version byte) *refReader {
	switch {
	case len(b) < 2 || b[0] != tag:
		return &refReader{err: fmt.Errorf("wire: malformed record: not a %q record", tag)}
	case b[1] != version:
		return &refReader{err: fmt.Errorf("wire: malformed record: unknown version %d of %q", b[1], tag)}
	}
	return &refReader{rest: b[2:]}
}

func (r *refReader) fail(what string) {
	if r.err == nil {
		r.rest, r.err = nil, fmt.Errorf("wire: malformed record: %s", what)
	}
}

func (r *refReader) uint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.rest)
	if n <= 0 {
		r.fail("bad uint")
		return 0
	}
	r.rest = r.rest[n:]
	return v
}

func (r *refReader) int() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.rest)
	if n <= 0 {
		r.fail("bad int")
		return 0
	}
	r.rest = r.rest[n:]
	return v
}

func (r *refReader) bool() bool {
	if r.err != nil {
		return false
	}
	if len(r.rest) == 0 || r.rest[0] > 1 {
		r.fail("bad bool")
		return false
	}
	v := r.rest[0] == 1
	r.rest = r.rest[1:]
	return v
}

func (r *refReader) bytes() []byte {
	n := r.uint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.rest)) {
		r.fail("bad bytes")
		return nil
	}
	p := r.rest[:n]
	r.rest = r.rest[n:]
	return p
}

func (r *refReader) count() int {
	n := r.uint()
	if r.err != nil {
		return 0
	}
	if n > uint64(len(r.rest)) {
		r.fail("bad count")
		return 0
	}
	return int(n)
}

func (r *refReader) close() error {
	if r.err == nil && len(r.rest) != 0 {
		r.fail(fmt.Sprintf("%d trailing bytes", len(r.rest)))
	}
	return r.err
}

// TestReaderAgreesWithReference: on random records (good and bad
// headers; varints of every length up to eleven bytes, tenth bytes of
// several values, lengths either side of one byte and of what is left)
// read by random sequences of every read, Err and Close, going on
// after errors and after Close, Reader returns what refReader returns,
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
// refReader agree on them, and reports whether they read without error.
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

// readsAgreeOn fails t unless Reader and refReader agree on reading rec
// with ops, a letter a read: 'u' Uint, 'i' Int, 'b' Bool, 's' String, 'p'
// Bytes, 't' BytesInPlace, 'c' Count, 'E' Err, 'C' Close (other letters
// are no read). It reports whether the reads went without error.
func readsAgreeOn(t interface{ Fatalf(string, ...any) }, rec, ops []byte) bool {
	got, want := MakeReader(rec, 'T', 1), refMakeReader(rec, 'T', 1)
	for k, op := range ops {
		var g, w any
		switch op {
		case 'u':
			g, w = got.Uint(), want.uint()
		case 'i':
			g, w = got.Int(), want.int()
		case 'b':
			g, w = got.Bool(), want.bool()
		case 's':
			g, w = got.String(), string(want.bytes())
		case 'p':
			p, q := got.Bytes(), want.bytes()
			if len(q) == 0 {
				q = nil
			}
			g, w = fmt.Sprintf("%#v", p), fmt.Sprintf("%#v", q)
		case 't':
			p, q := got.BytesInPlace(), want.bytes()
			if len(q) == 0 {
				q = nil
			}
			g, w = fmt.Sprintf("%#v", p), fmt.Sprintf("%#v", q)
		case 'c':
			g, w = got.Count(), want.count()
		case 'E':
			g, w = fmt.Sprint(got.Err()), fmt.Sprint(want.err)
		case 'C':
			g, w = fmt.Sprint(got.Close()), fmt.Sprint(want.close())
		default:
			continue
		}
		if g != w || len(got.b)-got.off != len(want.rest) || fmt.Sprint(got.err) != fmt.Sprint(want.err) {
			t.Fatalf("record %x, reads %q: read %d (%c) gave %v, %d bytes left, error %v; the reference %v, %d, %v",
				rec, ops, k, op, g, len(got.b)-got.off, got.err, w, len(want.rest), want.err)
		}
		if got.err != nil && !errors.Is(got.err, ErrMalformed) {
			t.Fatalf("record %x: error %v does not wrap ErrMalformed", rec, got.err)
		}
	}
	return want.err == nil
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
