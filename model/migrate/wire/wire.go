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
//
// It keeps the record whole and an offset into it, so that a read moves
// one word on (a re-sliced rest would be three).
type Reader struct {
	b   []byte // the record; nil once a header check failed
	off int    // what is read so far; len(b) once err is set
	err error
}

// MakeReader checks the tag and version and returns a reader of the rest,
// as a value: a decoder keeps it in a local variable, where it never lives
// on the heap whether or not the compiler inlines the decoder's calls.
func MakeReader(b []byte, tag, version byte) Reader {
	if len(b) < 2 || b[0] != tag || b[1] != version {
		return Reader{err: headerError(b, tag, version)} // made out of line
	}
	return Reader{b: b, off: 2}
}

// headerError says why the record's tag or version is wrong.
func headerError(b []byte, tag, version byte) error {
	if len(b) < 2 || b[0] != tag {
		return fmt.Errorf("%w: not a %q record", ErrMalformed, tag)
	}
	return fmt.Errorf("%w: unknown version %d of %q", ErrMalformed, b[1], tag)
}

// The errors of a field that does not read, made once: a call to fmt in
// Uint or Bool would put them over the inlining budget. Each has the text
// and the ErrMalformed wrapping that a fmt.Errorf at the read would give.
var (
	errBadUint  = fmt.Errorf("%w: bad uint", ErrMalformed)
	errBadInt   = fmt.Errorf("%w: bad int", ErrMalformed)
	errBadBool  = fmt.Errorf("%w: bad bool", ErrMalformed)
	errBadBytes = fmt.Errorf("%w: bad bytes", ErrMalformed)
	errBadCount = fmt.Errorf("%w: bad count", ErrMalformed)
)

// fail keeps the first error and consumes the rest, so that every later
// read fails too (it finds nothing left to read).
func (r *Reader) fail(err error) {
	r.off = len(r.b)
	if r.err == nil {
		r.err = err
	}
}

// Uint reads an unsigned integer: a uvarint, refused as binary.Uvarint
// refuses one (cut short, or past 64 bits or ten bytes).
//
// It is written to be inlined, loop and all: most fields are one byte,
// for which a call costs more than the read, and the timestamps' six bytes
// are read without a call to binary.Uvarint. It fits by a hair: cost 79 of
// the budget of 80 with Go 1.26 (go build -gcflags=-m=2 shows it). So an
// edit here, or a compiler that costs it differently, can stop the
// inlining with no test failing: that costs speed only (0.5M of the 280M
// instructions of callgrind migrate seeds 1-30, all in job.decode), never
// a different read.
func (r *Reader) Uint() uint64 {
	var x uint64
	for s := uint(0); s < 64 && r.off < len(r.b); s += 7 { // after an error nothing is left
		c := r.b[r.off]
		r.off++
		x |= uint64(c&0x7f) << s
		if c < 0x80 {
			if s < 63 || c <= 1 { // the tenth byte holds one bit
				return x
			}
			break
		}
	}
	r.fail(errBadUint)
	return 0
}

// Int reads a signed integer.
func (r *Reader) Int() int64 {
	if i := r.off; i < len(r.b) && r.b[i] < 0x80 {
		// One byte (a small group number, a zero time), read here
		// without a call to binary.Varint; the zigzag decoding is
		// binary.Varint's. (Int is over the inlining budget even so.)
		r.off = i + 1
		v := r.b[i]
		return int64(v>>1) ^ -int64(v&1)
	}
	return r.intSlow()
}

// intSlow is Int for a varint of several bytes, or on an error.
func (r *Reader) intSlow() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b[r.off:])
	if n <= 0 {
		r.fail(errBadInt)
		return 0
	}
	r.off += n
	return v
}

// Bool reads a boolean (inlined, as Uint is).
func (r *Reader) Bool() bool {
	if r.off < len(r.b) && r.b[r.off] <= 1 { // after an error nothing is left
		r.off++
		return r.b[r.off-1] == 1
	}
	r.fail(errBadBool)
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
	if i := r.off; i < len(r.b) && r.b[i] < 0x80 && int(r.b[i]) < len(r.b)-i {
		// A length of one byte with its bytes all there, as most are:
		// read without a call to Uint.
		end := i + 1 + int(r.b[i])
		r.off = end
		return r.b[i+1 : end]
	}
	n := r.Uint()
	if r.err != nil {
		return nil
	}
	if uint64(len(r.b)-r.off) < n {
		r.fail(errBadBytes)
		return nil
	}
	start := r.off
	r.off += int(n)
	return r.b[start:r.off]
}

// Count reads a collection length, bounded by what the rest could hold.
func (r *Reader) Count() int {
	n := r.Uint()
	if n > uint64(len(r.b)-r.off) {
		r.fail(errBadCount)
		return 0
	}
	return int(n)
}

// Err reports the first error so far (trailing bytes are not one yet).
func (r *Reader) Err() error { return r.err }

// Close reports the first error, or trailing bytes. Trailing bytes are an
// error like any other: a read after it reads nothing, as after the others.
func (r *Reader) Close() error {
	if r.err == nil && r.off != len(r.b) {
		r.fail(fmt.Errorf("%w: %d trailing bytes", ErrMalformed, len(r.b)-r.off))
	}
	return r.err
}
