// Package wire is the small binary encoding the migration's durable records
// (the route catalog, split jobs) use in the metadata store: uvarints and
// length-prefixed byte strings behind a record tag and version byte, so a
// reader rejects anything it does not understand rather than guess.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrMalformed is wrapped by every decoding error.
var ErrMalformed = errors.New("wire: malformed record")

// Writer appends fields to a buffer.
type Writer struct{ b []byte }

// NewWriter starts a record with its tag and version.
func NewWriter(tag byte, version byte) *Writer { return NewWriterSize(tag, version, 0) }

// NewWriterSize is NewWriter with room for a record of about size bytes
// from the start (the buffer grows past it as needed), so that encoding a
// record of a known shape takes one allocation instead of a doubling
// series.
func NewWriterSize(tag byte, version byte, size int) *Writer {
	b := make([]byte, 2, max(size, 2))
	b[0], b[1] = tag, version
	return &Writer{b: b}
}

// Uint appends an unsigned integer.
func (w *Writer) Uint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }

// Int appends a signed integer.
func (w *Writer) Int(v int64) { w.b = binary.AppendVarint(w.b, v) }

// Bool appends a boolean.
func (w *Writer) Bool(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

// Bytes appends a length-prefixed byte string.
func (w *Writer) Bytes(p []byte) {
	w.Uint(uint64(len(p)))
	w.b = append(w.b, p...)
}

// String appends a length-prefixed string.
func (w *Writer) String(s string) {
	w.Uint(uint64(len(s)))
	w.b = append(w.b, s...)
}

// Done returns the record.
func (w *Writer) Done() []byte { return w.b }

// Reader reads fields back; the first error sticks.
type Reader struct {
	b   []byte // what is left to read; empty once err is set
	err error
}

// MakeReader checks the tag and version and returns a reader of the rest,
// as a value: a decoder keeps it in a local variable, where it never lives
// on the heap whether or not the compiler inlines the decoder's calls.
func MakeReader(b []byte, tag, version byte) Reader {
	r := Reader{b: b}
	if len(b) < 2 || b[0] != tag || b[1] != version {
		r.badHeader(tag, version) // the error is made out of line
	} else {
		r.b = b[2:]
	}
	return r
}

// badHeader records why the record's tag or version is wrong.
func (r *Reader) badHeader(tag, version byte) {
	switch b := r.b; {
	case len(b) < 2 || b[0] != tag:
		r.b, r.err = nil, fmt.Errorf("%w: not a %q record", ErrMalformed, tag)
	default:
		r.b, r.err = nil, fmt.Errorf("%w: unknown version %d of %q", ErrMalformed, b[1], tag)
	}
}

func (r *Reader) fail(what string) {
	if r.err == nil {
		r.b, r.err = nil, fmt.Errorf("%w: bad %s", ErrMalformed, what)
	}
}

// Uint reads an unsigned integer.
func (r *Reader) Uint() uint64 {
	if len(r.b) > 0 && r.b[0] < 0x80 {
		// One byte, as most fields are: small enough to inline. (After an
		// error r.b is empty, so this never reads past one.) Written as a
		// self-assignment of r.b, so that reading does not make the
		// record's bytes escape.
		v := r.b[0]
		r.b = r.b[1:]
		return uint64(v)
	}
	return r.uintSlow()
}

// uintSlow is Uint for a varint of several bytes, or on an error.
func (r *Reader) uintSlow() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("uint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// Int reads a signed integer.
func (r *Reader) Int() int64 {
	if len(r.b) > 0 && r.b[0] < 0x80 {
		// One byte (a small group number, a zero time), inlined as Uint's
		// is; the zigzag decoding of binary.Varint.
		v := r.b[0]
		r.b = r.b[1:]
		return int64(v>>1) ^ -int64(v&1)
	}
	return r.intSlow()
}

// intSlow is Int for a varint of several bytes, or on an error.
func (r *Reader) intSlow() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("int")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// Bool reads a boolean.
func (r *Reader) Bool() bool {
	if len(r.b) > 0 && r.b[0] <= 1 {
		// Small enough to inline (after an error r.b is empty).
		v := r.b[0] == 1
		r.b = r.b[1:]
		return v
	}
	r.fail("bool")
	return false
}

// Bytes reads a length-prefixed byte string (a copy; nil when empty).
func (r *Reader) Bytes() []byte {
	b := r.next()
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

// BytesInPlace reads a length-prefixed byte string and returns it in place:
// it shares the record's bytes (nil when empty), so a caller that keeps it
// copies it (several at once, in one allocation, if it likes).
func (r *Reader) BytesInPlace() []byte {
	b := r.next()
	if len(b) == 0 {
		return nil
	}
	return b
}

// String reads a length-prefixed string.
func (r *Reader) String() string { return string(r.next()) }

// next reads a length-prefixed byte string and returns it in place (nil on
// error).
func (r *Reader) next() []byte {
	if len(r.b) > 0 && r.b[0] < 0x80 && int(r.b[0]) < len(r.b) {
		// A length of one byte with its bytes all there, as most are:
		// read without a call to Uint.
		n := int(r.b[0]) + 1
		b := r.b[1:n]
		r.b = r.b[n:]
		return b
	}
	n := r.Uint()
	if r.err != nil {
		return nil
	}
	if uint64(len(r.b)) < n {
		r.fail("bytes")
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}

// Count reads a collection length, bounded by what the rest could hold.
func (r *Reader) Count() int {
	n := r.Uint()
	if n > uint64(len(r.b)) {
		r.fail("count")
		return 0
	}
	return int(n)
}

// Err reports the first error so far (trailing bytes are not one yet).
func (r *Reader) Err() error { return r.err }

// Close reports the first error, or trailing bytes.
func (r *Reader) Close() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: %d trailing bytes", ErrMalformed, len(r.b))
	}
	return r.err
}
