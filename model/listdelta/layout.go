package listdelta

import (
	"encoding/binary"
	"errors"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
)

// The raw key layout, from the data plane's families (package keys): every
// row of a collection carries its user key length-prefixed, so a prefix
// scan of one key's rows never finds another key's, whatever bytes the
// keys hold (seed 001, rounds 1 and 4).
//
//	!lst|meta|<len><key>                   -> Head, Len  (base metadata)
//	!lst|meta|d|<len><key><commitTS><seq>  -> HeadDelta, LenDelta
//	!lst|itm|<len><key><seq>               -> the item
//	!lst|claim|<len><key><seq>             -> the claiming transaction
//	!hs|meta|<len><key>, !hs|meta|d|..., !hs|fld|<len><key><field>   (and !st|, !zs| with mem|)
//
// commitTS is the eight-byte commit timestamp the group leader issues for
// the writing transaction (it fills the slot: fsm.Stamp), seq the delta's
// number inside its transaction (four bytes), an item or claim's seq the
// list position (eight bytes, order-preserving for negative positions).
// The layout value switches to the draft's NUL-separated keys for the
// nul-separator bug.
type layout struct{ nul bool }

const (
	tsBytes  = 8
	seqBytes = 4
)

// Kind is a collection type: a list, or one of the counted collections.
type Kind uint8

// The collection kinds.
const (
	List Kind = iota
	Hash
	Set
	ZSet
)

var kindNames = [...]string{"list", "hash", "set", "zset"}

// String names the kind.
func (k Kind) String() string { return kindNames[k] }

// family returns the data-plane family of a kind's rows and the sub-family
// tags of its base metadata, deltas and members.
func (k Kind) family() (f keys.Family, meta, delta, member string) {
	switch k {
	case Hash:
		return keys.FamilyHash, "meta|", "meta|d|", "fld|"
	case Set:
		return keys.FamilySet, "meta|", "meta|d|", "mem|"
	case ZSet:
		return keys.FamilyZSet, "meta|", "meta|d|", "mem|"
	}
	return keys.FamilyListMeta, "", "", ""
}

// encode builds a row of family f (tag sub) for key uk with suffix.
func (l layout) encode(f keys.Family, sub, uk, suffix string) string {
	if l.nul {
		return f.Prefix() + sub + uk + "\x00" + suffix
	}
	return keys.EncodeSub(f, sub, uk, suffix)
}

// prefix returns the raw prefix of every row of family f (tag sub) of uk.
func (l layout) prefix(f keys.Family, sub, uk string) string {
	if l.nul {
		return f.Prefix() + sub + uk + "\x00"
	}
	return keys.KeyPrefix(f, sub, uk)
}

// prefixSpan returns the raw range of uk's rows of family f (tag sub).
func (l layout) prefixSpan(f keys.Family, sub, uk string) keys.Span {
	p := l.prefix(f, sub, uk)
	return keys.Span{Start: p, End: keys.PrefixEnd(p)}
}

// metaKey is kind's base metadata row of uk.
func (l layout) metaKey(kind Kind, uk string) string {
	if kind == List {
		return l.encode(keys.FamilyListMeta, "", uk, "")
	}
	f, meta, _, _ := kind.family()
	return l.encode(f, meta, uk, "")
}

// deltaSpan is the raw range of uk's delta rows.
func (l layout) deltaSpan(kind Kind, uk string) (keys.Family, keys.Span) {
	if kind == List {
		return keys.FamilyListDelta, l.prefixSpan(keys.FamilyListDelta, "", uk)
	}
	f, _, delta, _ := kind.family()
	return f, l.prefixSpan(f, delta, uk)
}

// deltaKey is the delta row of uk at commit timestamp ts (zero: a slot the
// leader fills) and number seq in its transaction; offset is where the
// timestamp's eight bytes start.
func (l layout) deltaKey(kind Kind, uk string, ts hlc.TS, seq uint32) (key string, offset int) {
	suffix := make([]byte, tsBytes+seqBytes)
	binary.BigEndian.PutUint64(suffix, uint64(ts))
	binary.BigEndian.PutUint32(suffix[tsBytes:], seq)
	f, sub := keys.FamilyListDelta, ""
	if kind != List {
		f, _, sub, _ = kind.family()
	}
	key = l.encode(f, sub, uk, string(suffix))
	return key, len(key) - tsBytes - seqBytes
}

// memberKey is a hash field's, set member's or sorted-set member's row.
func (l layout) memberKey(kind Kind, uk, member string) string {
	f, _, _, sub := kind.family()
	return l.encode(f, sub, uk, member)
}

// posKey is a list item's or claim's row at position seq.
func (l layout) posKey(f keys.Family, uk string, seq int64) string {
	return l.encode(f, "", uk, seqBytesOf(seq))
}

func (l layout) itemKey(uk string, seq int64) string  { return l.posKey(keys.FamilyListItem, uk, seq) }
func (l layout) claimKey(uk string, seq int64) string { return l.posKey(keys.FamilyListClaim, uk, seq) }

// posSpan is the raw range of uk's item or claim rows at positions
// [lo, hi).
func (l layout) posSpan(f keys.Family, uk string, lo, hi int64) keys.Span {
	if hi < lo {
		hi = lo
	}
	return keys.Span{Start: l.posKey(f, uk, lo), End: l.posKey(f, uk, hi)}
}

// seqBytesOf encodes a list position so that byte order is numeric order.
func seqBytesOf(seq int64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(seq)^1<<63)
	return string(b[:])
}

// posOf decodes the position at the end of an item or claim row.
func posOf(raw string) (int64, bool) {
	if len(raw) < 8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64([]byte(raw[len(raw)-8:])) ^ 1<<63), true
}

// Meta is a collection's metadata: a list's head position and length (its
// items sit at [Head, Head+Len)), or a counted collection's length (Head
// unused). A delta row holds the change one command made.
type Meta struct {
	Head, Len int64
}

// Tail is the position after a list's last item.
func (m Meta) Tail() int64 { return m.Head + m.Len }

// Add returns m changed by delta d.
func (m Meta) Add(d Meta) Meta { return Meta{Head: m.Head + d.Head, Len: m.Len + d.Len} }

// errBadRow says a metadata or delta row does not decode.
var errBadRow = errors.New("listdelta: undecodable metadata row")

// encodeMeta encodes a base metadata or delta value.
func encodeMeta(m Meta) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(m.Head))
	binary.BigEndian.PutUint64(b[8:], uint64(m.Len))
	return string(b[:])
}

// DecodeMeta decodes a base metadata or delta value.
func DecodeMeta(v string) (Meta, error) {
	if len(v) != 16 {
		return Meta{}, errBadRow
	}
	b := []byte(v)
	return Meta{Head: int64(binary.BigEndian.Uint64(b[:8])), Len: int64(binary.BigEndian.Uint64(b[8:]))}, nil
}
