// Package keys defines the raw key layout of the migrating KV store: the
// internal key families, the logical route key each raw key belongs to, the
// per-family export brackets of a route-key span, and the staged (shadow)
// keyspace a migration imports into.
//
// Membership in a route is decided by the route key, never by the raw key:
// an internal row such as "!lst|itm|k5\x00…" sorts far away from "k5" but
// belongs to the same route as "k5".
package keys

import "bytes"

// Family names a key family. FamilyUser holds plain user keys; the others
// are the internal families whose raw keys embed a user key.
type Family uint8

// The key families, in export order. Brackets run in this order.
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

// prefixes of the internal families. A family with a suffix separates the
// user key from it with suffixSep, so the user key is recoverable.
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
}

// hasSuffix reports whether a family's raw keys carry a suffix after the
// user key (a sequence number, a start timestamp).
var hasSuffix = [numFamilies]bool{
	FamilyListDelta: true, FamilyListItem: true, FamilyListClaim: true,
	FamilyTxnIntent: true, FamilyTxnCommit: true, FamilyTxnRollback: true,
}

// suffixSep ends the user key inside an internal raw key. User keys and
// route boundaries never contain it (see ValidUserKey), which is what makes
// BracketFor exact.
const suffixSep = 0x00

// localPrefix starts every group-local key.
const localPrefix = "!dist|"

// ValidUserKey reports whether k may be used as a user key or a route
// boundary: it must not contain the suffix separator, and must not fall in
// the group-local keyspace.
func ValidUserKey(k string) bool {
	return indexByte(k, suffixSep) < 0 && !(len(k) >= len(localPrefix) && k[:len(localPrefix)] == localPrefix)
}

// KeyAfter returns the smallest valid boundary above k: [k, KeyAfter(k))
// holds the route key k alone.
func KeyAfter(k string) string { return k + "\x01" }

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

// Encode builds the raw key of family f for user key uk with an optional
// suffix (ignored by families without one).
func Encode(f Family, uk string, suffix string) string {
	if f == FamilyUser {
		return uk
	}
	if !hasSuffix[f] {
		return prefixes[f] + uk
	}
	return prefixes[f] + uk + string(rune(suffixSep)) + suffix
}

// Classify returns the family of a raw key: FamilyLocal for group-local
// keys, else the internal family with the longest matching prefix, or
// FamilyUser. The longest match matters because "!lst|meta|d|" extends
// "!lst|meta|".
func Classify(raw string) Family {
	if len(raw) >= len(localPrefix) && raw[:len(localPrefix)] == localPrefix {
		return FamilyLocal
	}
	best, bestLen := FamilyUser, 0
	for f := FamilyListMeta; f < numFamilies; f++ {
		p := prefixes[f]
		if len(p) > bestLen && len(raw) >= len(p) && raw[:len(p)] == p {
			best, bestLen = f, len(p)
		}
	}
	return best
}

// RouteKey returns the logical key that decides which route raw belongs to:
// the embedded user key for internal families, raw itself otherwise
// (group-local keys have no route; their route key is meaningless).
func RouteKey(raw string) string {
	f := Classify(raw)
	if f == FamilyUser || f == FamilyLocal {
		return raw
	}
	rest := raw[len(prefixes[f]):]
	if hasSuffix[f] {
		if i := indexByte(rest, suffixSep); i >= 0 {
			return rest[:i]
		}
	}
	return rest
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
func (s Span) String() string {
	end := s.End
	if end == "" {
		end = "+inf"
	}
	return "[" + quote(s.Start) + "," + quote(end) + ")"
}

func quote(s string) string {
	var b bytes.Buffer
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e {
			const hex = "0123456789abcdef"
			b.WriteString(`\x`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Quote renders a raw key printably (internal separators as \x00).
func Quote(s string) string { return quote(s) }

// PrefixEnd returns the smallest key greater than every key with prefix p,
// or "" (+inf) when there is none.
func PrefixEnd(p string) string {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return ""
}

// Bracket is the raw key range one family's rows of a route-key span can
// occupy. A scan of Raw still has to filter by Classify and RouteKey: the
// raw range of "!lst|meta|" also holds "!lst|meta|d|" rows, and the user
// range of a span starting at "" holds every internal row.
type Bracket struct {
	Family Family
	Raw    Span
}

// BracketFor returns family f's raw range for route keys in s. The raw range
// of an internal family covers [prefix+start, prefix+end): every row whose
// route key is in s has a raw key in it, since the user key is followed by
// the separator (which sorts below every user key byte).
func BracketFor(f Family, s Span) Bracket {
	if f == FamilyUser {
		return Bracket{Family: f, Raw: s}
	}
	p := prefixes[f]
	end := PrefixEnd(p)
	if s.End != "" {
		end = p + s.End
	}
	return Bracket{Family: f, Raw: Span{Start: p + s.Start, End: end}}
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
	return Classify(raw) == b.Family && s.Contains(RouteKey(raw))
}

// stagePrefix is the staged (shadow) keyspace of migrations on a target.
const stagePrefix = localPrefix + "migstage|"

// StagePrefix returns the prefix of job's staged rows.
func StagePrefix(job uint64) string {
	return stagePrefix + hex16(job) + "|"
}

// StageKey returns the staged key of raw for job.
func StageKey(job uint64, raw string) string { return StagePrefix(job) + raw }

// StageSpan returns the staged keyspace of job.
func StageSpan(job uint64) Span {
	p := StagePrefix(job)
	return Span{Start: p, End: PrefixEnd(p)}
}

// Unstage returns the raw key of a staged key of job, and whether it is one.
func Unstage(job uint64, staged string) (string, bool) {
	p := StagePrefix(job)
	if len(staged) < len(p) || staged[:len(p)] != p {
		return "", false
	}
	return staged[len(p):], true
}

// IsStaged reports whether raw lies in any job's staged keyspace.
func IsStaged(raw string) bool {
	return len(raw) >= len(stagePrefix) && raw[:len(stagePrefix)] == stagePrefix
}

func hex16(v uint64) string {
	const hex = "0123456789abcdef"
	var b [16]byte
	for i := 15; i >= 0; i-- {
		b[i] = hex[v&15]
		v >>= 4
	}
	return string(b[:])
}
