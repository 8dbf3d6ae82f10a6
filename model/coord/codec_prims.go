package coord

import (
	"encoding/binary"
	"math"
)

// encoder appends fixed-width little-endian fields. Every variable-length
// field is a u32 length followed by its bytes, so each value has exactly one
// encoding: decode-then-encode reproduces accepted input byte for byte.
type encoder struct{ b []byte }

func (e *encoder) u8(v uint8)   { e.b = append(e.b, v) }
func (e *encoder) u32(v uint32) { e.b = binary.LittleEndian.AppendUint32(e.b, v) }
func (e *encoder) u64(v uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *encoder) flag(v bool) {
	if v {
		e.u8(1)
	} else {
		e.u8(0)
	}
}
func (e *encoder) bytes(v []byte) {
	e.u32(uint32(len(v)))
	e.b = append(e.b, v...)
}
func (e *encoder) raw(v []byte) { e.b = append(e.b, v...) }

func (e *encoder) spec(s ShardSpec) {
	e.bytes(s.Start)
	e.bytes(s.End)
	e.bytes(s.Metadata)
}

func (e *encoder) cursor(c Cursor) {
	e.bytes(c.LastKey)
	e.bytes(c.Token)
}

// decoder reads what encoder writes. The first failure sticks: later reads
// return zero values, and err reports the first problem and its offset.
type decoder struct {
	b      []byte
	off    int
	record string
	err    *DecodeError
}

func (d *decoder) fail(kind DecodeErrorKind, detail string) {
	if d.err == nil {
		d.err = &DecodeError{Record: d.record, Kind: kind, Offset: d.off, Detail: detail}
	}
}

func (d *decoder) take(n int, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b)-d.off {
		d.fail(DecodeTruncated, what)
		return nil
	}
	v := d.b[d.off : d.off+n]
	d.off += n
	return v
}

func (d *decoder) u8(what string) uint8 {
	v := d.take(1, what)
	if v == nil {
		return 0
	}
	return v[0]
}

func (d *decoder) u32(what string) uint32 {
	v := d.take(4, what)
	if v == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(v)
}

func (d *decoder) u64(what string) uint64 {
	v := d.take(8, what)
	if v == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(v)
}

// flag reads a presence byte, which must be exactly 0 or 1.
func (d *decoder) flag(what string) bool {
	v := d.u8(what)
	if v > 1 {
		d.fail(DecodeBadValue, what+" flag is neither 0 nor 1")
	}
	return v == 1
}

// bytes reads a length-prefixed field into a fresh slice (empty -> nil), so
// decoded records never alias the input buffer.
func (d *decoder) bytes(what string) []byte { return d.namedBytes(what, "") }

// namedBytes is bytes for the field what+part. Error details name fields
// by joined strings ("spec start length"); joining them for every field
// read cost a record decode most of its allocations, so the name is built
// only when the field is bad.
func (d *decoder) namedBytes(what, part string) []byte {
	n := d.namedU32(what, part, " length")
	if d.err != nil {
		return nil
	}
	if uint64(n) > math.MaxInt32 {
		d.fail(DecodeTruncated, what+part)
		return nil
	}
	if int(n) > len(d.b)-d.off {
		d.fail(DecodeTruncated, what+part)
		return nil
	}
	return cloneBytes(d.take(int(n), ""))
}

// namedU32 is u32 for the field what+part+suffix (see namedBytes).
func (d *decoder) namedU32(what, part, suffix string) uint32 {
	if d.err == nil && len(d.b)-d.off < 4 {
		d.fail(DecodeTruncated, what+part+suffix)
		return 0
	}
	return d.u32("")
}

// count reads a u32 element count and checks that count elements of
// elemSize bytes can still follow and that it does not exceed max, before
// anything is allocated for them.
func (d *decoder) count(what string, elemSize, max int) int {
	n := d.namedU32(what, "", " count")
	if d.err != nil {
		return 0
	}
	if uint64(n) > uint64(max) {
		d.fail(DecodeBadValue, what+" count above its limit")
		return 0
	}
	if uint64(n)*uint64(elemSize) > uint64(len(d.b)-d.off) {
		d.fail(DecodeTruncated, what)
		return 0
	}
	return int(n)
}

func (d *decoder) spec(what string) ShardSpec {
	return ShardSpec{Start: d.namedBytes(what, " start"), End: d.namedBytes(what, " end"), Metadata: d.namedBytes(what, " metadata")}
}

func (d *decoder) cursor() Cursor {
	return Cursor{LastKey: d.bytes("cursor last key"), Token: d.bytes("cursor token")}
}

func (d *decoder) tenant() TenantID {
	var t TenantID
	copy(t[:], d.take(len(t), "tenant"))
	return t
}

// finish reports trailing bytes after a complete record.
func (d *decoder) finish() {
	if d.err == nil && d.off != len(d.b) {
		d.fail(DecodeTrailingBytes, "bytes after the end of the record")
	}
}
