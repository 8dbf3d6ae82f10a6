package listcheck

import (
	"encoding/binary"
	"strings"
)

// The checker's own reading of the collections' rows, written from seed
// 001's final key layout and kept apart from model/listdelta and the data
// plane's keys package on purpose: a mistake in the protocol's encoding or
// decoding cannot make the truth agree with it.
//
// Each row of collection key k starts with its family's prefix (and, for
// hashes, sets and sorted sets, a sub-family tag), then k's length as four
// big-endian bytes, then k, then the row's suffix: nothing for the base
// metadata, an eight-byte commit timestamp and a four-byte number for a
// delta, an eight-byte position (sign bit flipped) for a list item or
// claim, the member for a counted collection's member. A row that does not
// start with a NUL byte after the prefix was laid out with a NUL separator
// (a wrong writer); its key is everything before the suffix, whose width
// is fixed for every row kind but members, so the checker still knows
// whose row it is.

// Row is one visible row of the store: the newest version of its raw key,
// neither a tombstone nor expired.
type Row struct {
	Key, Value string
}

// rowKind is what a row is to a collection.
type rowKind int

const (
	rowMeta rowKind = iota
	rowDelta
	rowItem
	rowClaim
	rowMember
)

// family is a collection family's prefixes.
type family struct {
	meta, delta, item, claim, member string
}

var listFamily = family{meta: "!lst|meta|", delta: "!lst|meta|d|", item: "!lst|itm|", claim: "!lst|claim|"}

// countedFamilies are the hash, set and sorted-set families, by kind name.
var countedFamilies = map[string]family{
	"hash": {meta: "!hs|meta|", delta: "!hs|meta|d|", member: "!hs|fld|"},
	"set":  {meta: "!st|meta|", delta: "!st|meta|d|", member: "!st|mem|"},
	"zset": {meta: "!zs|meta|", delta: "!zs|meta|d|", member: "!zs|mem|"},
}

// suffixWidth is the fixed suffix width of each row kind (-1: a member).
var suffixWidth = map[rowKind]int{rowMeta: 0, rowDelta: 12, rowItem: 8, rowClaim: 8, rowMember: -1}

// lenPrefixed returns the raw prefix of k's rows under family prefix p.
func lenPrefixed(p, k string) string {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(k)))
	return p + string(n[:]) + k
}

// prefixEnd is the smallest key above every key starting with p.
func prefixEnd(p string) string {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return ""
}

// ranges returns the raw ranges where k's rows of kind rk under prefix p
// can lie: the length-prefixed one, and the NUL-separated one.
func ranges(p, k string) [][2]string {
	lp := lenPrefixed(p, k)
	np := p + k + "\x00"
	return [][2]string{{lp, prefixEnd(lp)}, {np, prefixEnd(np)}}
}

// owner decodes whose row raw (under prefix p, of kind rk) is, and its
// suffix; ok is false when raw is not such a row (a longer family prefix
// that extends p, e.g. a delta row under the meta prefix).
func owner(raw, p string, rk rowKind) (k, suffix string, ok bool) {
	if !strings.HasPrefix(raw, p) {
		return "", "", false
	}
	rest := raw[len(p):]
	if len(rest) >= 4 && rest[0] == 0 {
		n := int(binary.BigEndian.Uint32([]byte(rest[:4])))
		if 4+n > len(rest) {
			return "", "", false
		}
		k, suffix = rest[4:4+n], rest[4+n:]
		if w := suffixWidth[rk]; w >= 0 && len(suffix) != w {
			return "", "", false
		}
		return k, suffix, true
	}
	w := suffixWidth[rk]
	if w < 0 {
		i := strings.IndexByte(rest, 0)
		if i < 0 {
			return "", "", false
		}
		return rest[:i], rest[i+1:], true
	}
	if len(rest) < w+1 || rest[len(rest)-w-1] != 0 {
		return "", "", false
	}
	return rest[:len(rest)-w-1], rest[len(rest)-w:], true
}

// position decodes an item's or claim's suffix.
func position(suffix string) int64 {
	return int64(binary.BigEndian.Uint64([]byte(suffix)) ^ 1<<63)
}

// meta decodes a base metadata or delta value (head, length).
func meta(v string) (head, n int64, ok bool) {
	if len(v) != 16 {
		return 0, 0, false
	}
	b := []byte(v)
	return int64(binary.BigEndian.Uint64(b[:8])), int64(binary.BigEndian.Uint64(b[8:])), true
}
