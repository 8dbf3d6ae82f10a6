// Package keys defines the raw key layout of the migrating KV store: the
// internal key families, the logical route key each raw key belongs to, the
// per-family export brackets of a route-key span, and the staged (shadow)
// keyspace a migration imports into.
//
// Membership in a route is decided by the route key, never by the raw key:
// an internal row such as "!lst|itm|\x00\x00\x00\x02k5…" sorts far away
// from "k5" but belongs to the same route as "k5".
//
// Layout. A plain user key is its own raw key. The lock family is its
// prefix followed by the user key. Every other internal family writes its
// prefix, the user key's length as four big-endian bytes, the user key and
// then the family's suffix (a sequence number, a commit timestamp, a field
// name, a transaction id): binary safe, so a route key may hold any byte,
// NUL included (seed 001, review round 4: a NUL separator collides for
// binary keys). A route key never starts with a NUL byte (ValidRouteKey),
// so the first byte after a family's prefix tells the layout apart from
// rows an older (or wrong) writer laid out with a NUL separator: those
// still route by the user key up to the first NUL.
//
// The collection families (hash, set, zset) are umbrellas: "!hs|" followed
// by a sub-family tag ("meta|", "meta|d|", "fld|", ...) and then the
// length-prefixed user key. One export bracket covers an umbrella.
package keys

import (
	"slices"
	"strings"
)

// Family names a key family. FamilyUser holds plain user keys; the others
// are the internal families whose raw keys embed a user key.
type Family uint8

// The key families, in export order. Brackets run in this order; new
// families are appended, so a bracket's number never changes.
const (
	FamilyUser Family = iota
	FamilyListMeta
	FamilyListDelta
	FamilyListItem
	FamilyListClaim
	FamilyTxnLock
	FamilyTxnIntent
	FamilyTxnCommit
	FamilyTxnRollback
	// FamilyHash, FamilySet and FamilyZSet are the collection umbrellas
	// ("!hs|", "!st|", "!zs|"): their rows carry a sub-family tag (Subs).
	FamilyHash
	FamilySet
	FamilyZSet
	numFamilies

	// FamilyLocal holds a group's own bookkeeping ("!dist|…": staged rows,
	// import cursors). It belongs to no route and is never exported.
	FamilyLocal Family = 0xff
)

// Families returns every family in bracket order.
func Families() []Family {
	out := make([]Family, numFamilies)
	for i := range out {
		out[i] = Family(i)
	}
	return out
}

// prefixes of the internal families.
var prefixes = [numFamilies]string{
	FamilyUser:        "",
	FamilyListMeta:    "!lst|meta|",
	FamilyListDelta:   "!lst|meta|d|",
	FamilyListItem:    "!lst|itm|",
	FamilyListClaim:   "!lst|claim|",
	FamilyTxnLock:     "!txn|lock|",
	FamilyTxnIntent:   "!txn|int|",
	FamilyTxnCommit:   "!txn|cmt|",
	FamilyTxnRollback: "!txn|rb|",
	FamilyHash:        "!hs|",
	FamilySet:         "!st|",
	FamilyZSet:        "!zs|",
}

// lengthPrefixed says which families write the user key's length before
// it: all but plain user keys and lock rows (whose raw key ends with the
// user key, so a route-key span is one contiguous raw range).
var lengthPrefixed = [numFamilies]bool{
	FamilyListMeta: true, FamilyListDelta: true, FamilyListItem: true, FamilyListClaim: true,
	FamilyTxnIntent: true, FamilyTxnCommit: true, FamilyTxnRollback: true,
	FamilyHash: true, FamilySet: true, FamilyZSet: true,
}

// umbrella says which families carry a sub-family tag after the prefix.
var umbrella = [numFamilies]bool{FamilyHash: true, FamilySet: true, FamilyZSet: true}

// Subs are the sub-family tags of the collection umbrellas, longest first
// (so "meta|d|" is found before "meta|"): base metadata, delta rows, hash
// fields, set members, sorted-set members.
var Subs = []string{"meta|d|", "meta|", "fld|", "mem|"}

// legacySep ends the user key inside a row laid out with a NUL separator
// (see the package comment).
const legacySep = 0x00

// lenBytes is the width of the user key's length.
const lenBytes = 4

// MaxRouteKeyLen bounds a route key's length, so its length prefix starts
// with a NUL byte and tells the layout apart from a legacy row.
const MaxRouteKeyLen = 1<<24 - 1

// localPrefix starts every group-local key.
const localPrefix = "!dist|"

// ValidUserKey reports whether k may be used as a plain user key or a route
// boundary: it must not contain a NUL byte (route boundaries sit between
// route keys, and [k, KeyAfter(k)) must hold k's own rows only), and must
// not fall in the group-local keyspace.
func ValidUserKey(k string) bool {
	return indexByte(k, legacySep) < 0 && !(len(k) >= len(localPrefix) && k[:len(localPrefix)] == localPrefix)
}

// ValidRouteKey reports whether k may name the user key of internal rows
// (a list, a hash, a transaction's primary): any bytes, NUL included, but
// not empty, not starting with a NUL byte, not itself an internal or local
// raw key, and at most MaxRouteKeyLen long.
func ValidRouteKey(k string) bool {
	return len(k) > 0 && len(k) <= MaxRouteKeyLen && k[0] != legacySep && Classify(k) == FamilyUser
}

// KeyAfter returns the smallest valid boundary above k: [k, KeyAfter(k))
// holds the route key k alone among boundaries (keys extending k with a
// NUL byte lie in it too, and no boundary separates them from k).
func KeyAfter(k string) string { return k + "\x01" }

// IsKeyAfter reports whether end is KeyAfter(k), without building it.
func IsKeyAfter(end, k string) bool {
	return len(end) == len(k)+1 && end[len(k)] == 0x01 && end[:len(k)] == k
}

// Exactly returns the route-key span holding k and nothing else.
func Exactly(k string) Span { return Span{Start: k, End: k + "\x00"} }

// Prefix returns the family's raw key prefix ("" for user keys).
func (f Family) Prefix() string {
	if f == FamilyLocal {
		return localPrefix
	}
	return prefixes[f]
}

// String names the family.
func (f Family) String() string {
	switch f {
	case FamilyUser:
		return "user"
	case FamilyLocal:
		return "local"
	}
	if f < numFamilies {
		return prefixes[f]
	}
	return "family?"
}

// lengthPrefixedKey returns prefix, sub, uk's four-byte big-endian length,
// uk and suffix joined, built in one allocation (list and collection keys
// are encoded for every operation on them).
func lengthPrefixedKey(prefix, sub, uk, suffix string) string {
	n := len(uk)
	var b strings.Builder
	b.Grow(len(prefix) + len(sub) + lenBytes + n + len(suffix))
	b.WriteString(prefix)
	b.WriteString(sub)
	b.Write([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
	b.WriteString(uk)
	b.WriteString(suffix)
	return b.String()
}

// Encode builds the raw key of family f for user key uk with suffix
// (families without one ignore it; an umbrella family gets no sub-family
// tag: see EncodeSub).
func Encode(f Family, uk string, suffix string) string {
	return EncodeSub(f, "", uk, suffix)
}

// EncodeSub builds the raw key of family f, sub-family tag sub (one of
// Subs or ""; other families than the umbrellas ignore it), user key uk
// and suffix.
func EncodeSub(f Family, sub string, uk string, suffix string) string {
	switch {
	case f == FamilyUser:
		return uk
	case !lengthPrefixed[f]:
		return prefixes[f] + uk
	case !umbrella[f]:
		sub = ""
	}
	return lengthPrefixedKey(prefixes[f], sub, uk, suffix)
}

// KeyPrefix returns the raw prefix every row of family f (sub-family tag
// sub) and user key uk starts with: a prefix scan of it finds that user
// key's rows and no other's.
func KeyPrefix(f Family, sub string, uk string) string {
	if !lengthPrefixed[f] {
		return Encode(f, uk, "")
	}
	if !umbrella[f] {
		sub = ""
	}
	return lengthPrefixedKey(prefixes[f], sub, uk, "")
}

// Classify returns the family of a raw key: FamilyLocal for group-local
// keys, else the internal family with the longest matching prefix, or
// FamilyUser. The longest match matters because "!lst|meta|d|" extends
// "!lst|meta|".
func Classify(raw string) Family {
	if len(raw) == 0 || raw[0] != '!' {
		return FamilyUser // every other family's prefix starts with '!' (most keys are user keys)
	}
	if len(raw) >= len(localPrefix) && raw[:len(localPrefix)] == localPrefix {
		return FamilyLocal
	}
	if len(raw) < 2 {
		return FamilyUser
	}
	for _, f := range bySecondByte[raw[1]] {
		if p := prefixes[f]; len(raw) >= len(p) && raw[:len(p)] == p {
			return f // the longest match: candidates come longest first
		}
	}
	return FamilyUser
}

// bySecondByte lists, by a raw key's second byte, the internal families
// whose prefix has that second byte: the only ones whose prefix the key can
// start with (every prefix starts with '!' and is longer than one byte), so
// the only ones Classify need try. Each list runs from the longest prefix
// to the shortest, so the first that matches is the longest match (two
// distinct prefixes of one length cannot both start a key).
var bySecondByte = func() (t [256][]Family) {
	for f := FamilyListMeta; f < numFamilies; f++ {
		p := prefixes[f]
		t[p[1]] = append(t[p[1]], f)
	}
	for i := range t {
		slices.SortStableFunc(t[i], func(a, b Family) int { return len(prefixes[b]) - len(prefixes[a]) })
	}
	return t
}()

// Parts splits an internal raw key into its sub-family tag, user key and
// suffix. ok is false for a plain user key, a local key, or a malformed
// row (its route key is then the rest after the prefix).
func Parts(raw string) (f Family, sub, uk, suffix string, ok bool) {
	f = Classify(raw)
	if f == FamilyUser || f == FamilyLocal {
		return f, "", raw, "", false
	}
	rest := raw[len(prefixes[f]):]
	if !lengthPrefixed[f] {
		return f, "", rest, "", true
	}
	if umbrella[f] {
		for _, s := range Subs {
			if len(rest) >= len(s) && rest[:len(s)] == s {
				sub, rest = s, rest[len(s):]
				break
			}
		}
	}
	if len(rest) >= lenBytes && rest[0] == 0 {
		n := int(rest[1])<<16 | int(rest[2])<<8 | int(rest[3])
		if n <= len(rest)-lenBytes {
			return f, sub, rest[lenBytes : lenBytes+n], rest[lenBytes+n:], true
		}
		return f, sub, rest, "", false
	}
	// A legacy row: the user key runs up to the first NUL.
	if i := indexByte(rest, legacySep); i >= 0 {
		return f, sub, rest[:i], rest[i+1:], true
	}
	return f, sub, rest, "", true
}

// RouteKey returns the logical key that decides which route raw belongs to:
// the embedded user key for internal families, raw itself otherwise
// (group-local keys have no route; their route key is meaningless).
func RouteKey(raw string) string {
	_, _, uk, _, _ := Parts(raw)
	return uk
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// Span is a half-open interval of keys [Start, End); an empty End means
// +infinity.
type Span struct {
	Start, End string
}

// Contains reports whether k lies in the span.
func (s Span) Contains(k string) bool {
	return k >= s.Start && (s.End == "" || k < s.End)
}

// Overlaps reports whether two spans share a key.
func (s Span) Overlaps(o Span) bool {
	return (s.End == "" || o.Start < s.End) && (o.End == "" || s.Start < o.End)
}

// String renders the span.
func (s Span) String() string { return string(s.AppendTo(nil)) }

// AppendTo appends the span as String renders it (a trace record can take
// it from a stack buffer, with no string made).
func (s Span) AppendTo(b []byte) []byte {
	end := s.End
	if end == "" {
		end = "+inf"
	}
	b = append(b, '[')
	b = appendQuoted(b, s.Start)
	b = append(b, ',')
	b = appendQuoted(b, end)
	return append(b, ')')
}

// appendQuoted appends s with every byte outside printable ASCII written
// as \xNN.
func appendQuoted(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e {
			b = append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
			continue
		}
		b = append(b, c)
	}
	return b
}

// Quote renders a raw key printably (internal separators as \x00).
func Quote(s string) string { return string(appendQuoted(nil, s)) }

// PrefixEnd returns the smallest key greater than every key with prefix p,
// or "" (+inf) when there is none.
func PrefixEnd(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] < 0xff {
			var b strings.Builder
			b.Grow(i + 1)
			b.WriteString(p[:i])
			b.WriteByte(p[i] + 1)
			return b.String()
		}
	}
	return ""
}

// prefixEnds are the families' PrefixEnd, worked out once.
var prefixEnds = func() (out [numFamilies]string) {
	for f, p := range prefixes {
		out[f] = PrefixEnd(p)
	}
	return out
}()

// Bracket is the raw key range one family's rows of a route-key span can
// occupy. A scan of Raw still has to filter by Classify and RouteKey: the
// raw range of "!lst|meta|" also holds "!lst|meta|d|" rows, and the user
// range of a span starting at "" holds every internal row.
type Bracket struct {
	Family Family
	Raw    Span
}

// BracketFor returns family f's raw range for route keys in s. Plain user
// keys and lock rows keep their route key's order: their raw range is
// [prefix+start, prefix+end). A length-prefixed family sorts by length
// first, so its bracket is the family's whole prefix range (InBracket then
// keeps the rows whose route key lies in s).
func BracketFor(f Family, s Span) Bracket {
	if f == FamilyUser {
		return Bracket{Family: f, Raw: s}
	}
	p := prefixes[f]
	end := prefixEnds[f]
	if !lengthPrefixed[f] && s.End != "" {
		end = p + s.End
	}
	start := p
	if !lengthPrefixed[f] {
		start = p + s.Start
	}
	return Bracket{Family: f, Raw: Span{Start: start, End: end}}
}

// Brackets returns one bracket per family for the route-key span s, in
// export order.
func Brackets(s Span) []Bracket {
	out := make([]Bracket, 0, numFamilies)
	for _, f := range Families() {
		out = append(out, BracketFor(f, s))
	}
	return out
}

// InBracket reports whether raw belongs to bracket b of route-key span s:
// it has b's family and its route key lies in s.
func InBracket(raw string, b Bracket, s Span) bool {
	f, _, rk, _, _ := Parts(raw) // the family and the route key, classified once
	return f == b.Family && s.Contains(rk)
}

// stagePrefix is the staged (shadow) keyspace of migrations on a target.
const stagePrefix = localPrefix + "migstage|"

// stagePrefixLen is the length of every job's staged prefix.
const stagePrefixLen = len(stagePrefix) + 16 + 1

// StagePrefix returns the prefix of job's staged rows.
func StagePrefix(job uint64) string { return StageKey(job, "") }

// StageKey returns the staged key of raw for job (built in one allocation:
// staged keys are made for every imported row).
func StageKey(job uint64, raw string) string {
	var p [stagePrefixLen]byte
	var b strings.Builder
	b.Grow(stagePrefixLen + len(raw))
	b.Write(AppendStagePrefix(p[:0], job))
	b.WriteString(raw)
	return b.String()
}

// AppendStagePrefix appends job's staged prefix to b and returns the
// extended slice: with raw appended too, a staged key that is only looked
// up need not become a string (a map lookup by string(bytes) copies
// nothing).
func AppendStagePrefix(b []byte, job uint64) []byte {
	return append(AppendHex16(append(b, stagePrefix...), job), '|')
}

// hexDigits are the lower-case hexadecimal digits.
const hexDigits = "0123456789abcdef"

// AppendHex16 appends v as sixteen lower-case hexadecimal digits (fmt's
// %016x), the form job ids take in staged and metadata keys.
func AppendHex16(b []byte, v uint64) []byte {
	b = append(b, "0000000000000000"...) // the digits are filled in place: one append, not sixteen
	d := b[len(b)-16:]
	for i := len(d) - 1; i >= 0; i-- {
		d[i] = hexDigits[v&15]
		v >>= 4
	}
	return b
}

// StageSpan returns the staged keyspace of job: its staged prefix and the
// prefix's PrefixEnd (the prefix ends with '|', so the end ends with '}'),
// both cut from one string (a promotion works the span out for every
// batch).
func StageSpan(job uint64) Span {
	var a [2 * stagePrefixLen]byte
	b := AppendStagePrefix(AppendStagePrefix(a[:0], job), job)
	b[len(b)-1]++
	both := string(b)
	return Span{Start: both[:stagePrefixLen], End: both[stagePrefixLen:]}
}

// Unstage returns the raw key of a staged key of job, and whether it is one.
func Unstage(job uint64, staged string) (string, bool) {
	var a [stagePrefixLen]byte
	p := AppendStagePrefix(a[:0], job) // compared in place: no string made
	if len(staged) < len(p) || staged[:len(p)] != string(p) {
		return "", false
	}
	return staged[len(p):], true
}

// IsStaged reports whether raw lies in any job's staged keyspace.
func IsStaged(raw string) bool {
	return len(raw) >= len(stagePrefix) && raw[:len(stagePrefix)] == stagePrefix
}

// RouteSpan returns the route-key span of the raw keys in [start, end) when
// one user key's rows hold them all: a raw key of a family (end empty), or
// a range inside the rows of one user key (a prefix scan of KeyPrefix, or
// part of one). ok is false for other ranges, whose route keys this layout
// cannot bound.
func RouteSpan(start, end string) (Span, bool) {
	f, sub, uk, _, ok := Parts(start)
	if end == "" {
		rk := RouteKey(start)
		return Span{Start: rk, End: KeyAfter(rk)}, true
	}
	if !ok || !lengthPrefixed[f] {
		return Span{}, false
	}
	p := KeyPrefix(f, sub, uk)
	if len(start) < len(p) || start[:len(p)] != p || end > PrefixEnd(p) || end < start {
		return Span{}, false
	}
	return Span{Start: uk, End: KeyAfter(uk)}, true
}
