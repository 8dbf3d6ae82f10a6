// Package wireref is the plainest reading of package wire's record format,
// for tests to hold wire's Reader and the decoders built on it (job and
// catalog records, fsm's lock rows) to: the rest of a record re-sliced
// after each field, every varint through encoding/binary, the first error
// kept and nothing read after it, its message spelled as wire spells it.
//
// It imports nothing of wire, so a faster Reader cannot drift from it
// unnoticed. It is slow and allocates; production code reads with wire.
package wireref

import (
	"encoding/binary"
	"fmt"
)

// Reader reads the fields of one record; the first error sticks.
type Reader struct {
	rest []byte // what is left to read; nil once Err is set
	err  error
}

// MakeReader checks b's header (tag and version) and returns a reader of
// the fields after it; a wrong header is the reader's error.
func MakeReader(b []byte, tag, version byte) *Reader {
	switch {
	case len(b) < 2 || b[0] != tag:
		return &Reader{err: fmt.Errorf("wire: malformed record: not a %q record", tag)}
	case b[1] != version:
		return &Reader{err: fmt.Errorf("wire: malformed record: unknown version %d of %q", b[1], tag)}
	}
	return &Reader{rest: b[2:]}
}

// fail keeps the first error (its text after wire's prefix) and drops the
// rest, so that every later read fails too.
func (r *Reader) fail(what string) {
	if r.err == nil {
		r.rest, r.err = nil, fmt.Errorf("wire: malformed record: %s", what)
	}
}

// Uint reads an unsigned varint.
func (r *Reader) Uint() uint64 {
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

// Int reads a signed (zigzag) varint.
func (r *Reader) Int() int64 {
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

// Bool reads a byte that must be 0 or 1.
func (r *Reader) Bool() bool {
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

// Bytes reads a length-prefixed byte string, in place (nil on error).
func (r *Reader) Bytes() []byte {
	n := r.Uint()
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

// String reads a length-prefixed byte string as a string.
func (r *Reader) String() string { return string(r.Bytes()) }

// Count reads a collection length, refused when larger than what is left.
func (r *Reader) Count() int {
	n := r.Uint()
	if r.err != nil {
		return 0
	}
	if n > uint64(len(r.rest)) {
		r.fail("bad count")
		return 0
	}
	return int(n)
}

// Left is how many bytes are left to read (none after an error).
func (r *Reader) Left() int { return len(r.rest) }

// Err is the first error so far.
func (r *Reader) Err() error { return r.err }

// Close reports the first error, or trailing bytes as one.
func (r *Reader) Close() error {
	if r.err == nil && len(r.rest) != 0 {
		r.fail(fmt.Sprintf("%d trailing bytes", len(r.rest)))
	}
	return r.err
}

// Try calls agrees, a decoder's agreement check that reports whether a
// record decoded, on the record b and on what such a test tries besides
// it: every shorter cut of b, and b with each byte in turn set to values
// that a varint, a bool or a length reads differently (0, 1, 2, 0x7f,
// 0x80, 0xff and the byte's neighbours), each a fresh copy. It counts
// the records agrees reports decoded and failed.
func Try(b []byte, agrees func([]byte) bool) (decoded, failed int) {
	count := func(c []byte) {
		if agrees(c) {
			decoded++
		} else {
			failed++
		}
	}
	count(b)
	for i := range b {
		count(append([]byte(nil), b[:i]...))
		for _, v := range []byte{0, 1, 2, 0x7f, 0x80, 0xff, b[i] + 1, b[i] - 1} {
			c := append([]byte(nil), b...)
			c[i] = v
			count(c)
		}
	}
	return decoded, failed
}
