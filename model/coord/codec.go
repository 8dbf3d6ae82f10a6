package coord

import "fmt"

// Every persisted record starts with two bytes: a tag naming the record
// type and the format version. Decoders refuse other tags and versions,
// truncated input, trailing bytes, unknown discriminants and (unless asked
// not to) records that break their invariants, always with a *DecodeError
// and never with a panic.
const (
	// CodecVersion is the only format version this package writes and
	// reads.
	CodecVersion byte = 2

	tagShardRecord  byte = 'S'
	tagRunRecord    byte = 'R'
	tagOwnerBinding byte = 'O'
	tagClaimRecord  byte = 'C'
)

// DecodeErrorKind classifies a decode failure.
type DecodeErrorKind uint8

const (
	// DecodeBadTag: the first byte names another record type.
	DecodeBadTag DecodeErrorKind = iota + 1
	// DecodeUnknownVersion: the format version is not CodecVersion.
	DecodeUnknownVersion
	// DecodeTruncated: the input ends inside the record.
	DecodeTruncated
	// DecodeTrailingBytes: bytes follow a complete record.
	DecodeTrailingBytes
	// DecodeBadValue: a flag is not 0 or 1, or a count exceeds its limit.
	DecodeBadValue
	// DecodeBadDiscriminant: an enum byte has no meaning.
	DecodeBadDiscriminant
	// DecodeInvariant: the record is well-formed but breaks an invariant.
	DecodeInvariant
)

// String names the kind.
func (k DecodeErrorKind) String() string {
	switch k {
	case DecodeBadTag:
		return "wrong record tag"
	case DecodeUnknownVersion:
		return "unknown format version"
	case DecodeTruncated:
		return "truncated"
	case DecodeTrailingBytes:
		return "trailing bytes"
	case DecodeBadValue:
		return "bad value"
	case DecodeBadDiscriminant:
		return "unknown discriminant"
	case DecodeInvariant:
		return "invariant violated"
	}
	return "decode error(?)"
}

// DecodeError reports why a record could not be decoded.
type DecodeError struct {
	Record string // "shard record", "run record", ...
	Kind   DecodeErrorKind
	Offset int    // byte offset where the problem was found
	Detail string // which field, or which invariant
}

// Error describes the failure.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("coord: decode %s: %s at offset %d: %s", e.Record, e.Kind, e.Offset, e.Detail)
}

// header writes a record's tag and version.
func (e *encoder) header(tag byte) {
	e.u8(tag)
	e.u8(CodecVersion)
}

// header checks a record's tag and version.
func (d *decoder) header(tag byte) {
	if t := d.u8("record tag"); d.err == nil && t != tag {
		d.off--
		d.fail(DecodeBadTag, fmt.Sprintf("tag %#x", t))
		return
	}
	if v := d.u8("format version"); d.err == nil && v != CodecVersion {
		d.off--
		d.fail(DecodeUnknownVersion, fmt.Sprintf("version %d", v))
	}
}

// discriminant reads an enum byte and checks it with valid.
func (d *decoder) discriminant(what string, valid func(uint8) bool) uint8 {
	v := d.u8(what)
	if d.err == nil && !valid(v) {
		d.off--
		d.fail(DecodeBadDiscriminant, fmt.Sprintf("%s %d", what, v))
	}
	return v
}

// opLogEntrySize is the encoded size of an op-log entry.
const opLogEntrySize = 8 + 1 + 1 + 1 + 8 + 8

// opLogSize is the length of an op-log's encoding.
func opLogSize(r *opRing) int { return 1 + r.len()*opLogEntrySize }

// optSize is the length of an optional field's value: n when set.
func optSize(set bool, n int) int {
	if set {
		return n
	}
	return 0
}

// opLog encodes an op-log's entries, oldest first, read in place from
// its ring.
func (e *encoder) opLog(r *opRing) {
	e.u8(uint8(r.len()))
	for i := range r.len() {
		x := r.at(i)
		e.u64(uint64(x.Op))
		e.u8(uint8(x.Kind))
		e.u8(uint8(x.Result))
		e.u8(uint8(x.Refusal))
		e.u64(x.PayloadHash)
		e.u64(uint64(x.ExecutedAt))
	}
}

// opLog decodes an op-log's entries, oldest first, into push (the log's
// own Push: no slice in between).
func (d *decoder) opLog(capacity int, kindOK func(OpKind) bool, push func(OpLogEntry)) {
	n := int(d.u8("op-log count"))
	if d.err != nil {
		return
	}
	if n > capacity {
		d.off--
		d.fail(DecodeBadValue, "op-log count above capacity")
		return
	}
	if n*opLogEntrySize > len(d.b)-d.off {
		d.fail(DecodeTruncated, "op-log")
		return
	}
	for range n {
		var e OpLogEntry
		e.Op = OpID(d.u64("op id"))
		e.Kind = OpKind(d.discriminant("op kind", func(v uint8) bool { return kindOK(OpKind(v)) }))
		e.Result = OpResult(d.discriminant("op result", func(v uint8) bool { return OpResult(v).Valid() }))
		e.Refusal = Code(d.discriminant("op refusal", func(v uint8) bool { return Code(v) < codeEnd }))
		e.PayloadHash = d.u64("payload hash")
		e.ExecutedAt = LogicalTime(d.u64("executed at"))
		push(e)
	}
}

func (d *decoder) shardIDs(what string, max int) []ShardID {
	n := d.count(what, 8, max)
	if d.err != nil || n == 0 {
		return nil
	}
	out := make([]ShardID, n)
	for i := range out {
		out[i] = ShardID(d.u64(what))
	}
	return out
}

// invariant records a failed invariant check as the decode error.
func (d *decoder) invariant(err error) {
	if d.err == nil && err != nil {
		d.fail(DecodeInvariant, err.Error())
	}
}
