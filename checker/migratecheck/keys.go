package migratecheck

import (
	"cmp"
	"slices"
	"strings"
)

// The checker's own reading of the migrating store's key layout, written
// from MIGRATION.md ("Route key": internal families map back to the user
// key they belong to) and kept apart from model/migrate/keys on purpose:
// the exactly-once copy check, the fence check and the scan check decide
// membership of a moving span with these functions, so a mistake in the
// protocol's route-key, family or bracket functions cannot make the truth
// they judge against agree with the protocol's own mistake.

// localPrefix starts a group's own bookkeeping (staged rows, import
// cursors): no route, never copied.
const localPrefix = "!dist|"

// familyPrefixes are the internal families' raw key prefixes. A raw key of
// an internal family is its prefix and then: for the lock family, the user
// key; for every other family, the user key's length (four big-endian
// bytes, the first always NUL), the user key and a suffix; the collection
// families ("!hs|", "!st|", "!zs|") put a sub-family tag before the length.
// A row whose length bytes do not start with NUL was written with the older
// NUL-separator layout: its user key runs to the first NUL.
var familyPrefixes = []string{
	"!lst|meta|", "!lst|meta|d|", "!lst|itm|", "!lst|claim|",
	"!txn|lock|", "!txn|int|", "!txn|cmt|", "!txn|rb|",
	"!hs|", "!st|", "!zs|",
}

// prefixesBySecond are familyPrefixes by their second byte (the one after
// internalMark), longest first: familyOf tries only those a key's second
// byte allows, and the first that matches is the longest that does.
var prefixesBySecond = func() (by [256][]string) {
	for _, p := range familyPrefixes {
		by[p[1]] = append(by[p[1]], p)
	}
	for i := range by {
		slices.SortStableFunc(by[i], func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	}
	return by
}()

// internalMark is the first byte of localPrefix and of every family
// prefix (TestPrefixesStartWithMark): a key that does not start with it is
// a user key.
const internalMark = '!'

// collectionTags are the collection families' sub-family tags; a longer
// tag is tried before one it extends.
var collectionTags = []string{"meta|d|", "meta|", "fld|", "mem|"}

// familyOf returns the prefix of raw's family ("" for a user key) and
// whether raw belongs to a route at all. The longest prefix wins:
// "!lst|meta|d|" extends "!lst|meta|".
func familyOf(raw string) (prefix string, routed bool) {
	if raw == "" || raw[0] != internalMark {
		return "", true // a user key: no family or local prefix starts it
	}
	if strings.HasPrefix(raw, localPrefix) {
		return localPrefix, false
	}
	if len(raw) < 2 {
		return "", true // no prefix is this short
	}
	for _, p := range prefixesBySecond[raw[1]] {
		if strings.HasPrefix(raw, p) {
			return p, true
		}
	}
	return "", true
}

// routeKeyOf returns the user key raw belongs to, and whether it has one.
func routeKeyOf(raw string) (string, bool) {
	prefix, routed := familyOf(raw)
	if !routed {
		return "", false
	}
	rest := raw[len(prefix):]
	switch prefix {
	case "":
		return rest, true
	case "!txn|lock|":
		return rest, true
	case "!hs|", "!st|", "!zs|":
		for _, tag := range collectionTags {
			if strings.HasPrefix(rest, tag) {
				rest = rest[len(tag):]
				break
			}
		}
	}
	if len(rest) >= 4 && rest[0] == 0 {
		n := int(rest[1])<<16 | int(rest[2])<<8 | int(rest[3])
		if 4+n <= len(rest) {
			return rest[4 : 4+n], true
		}
		return rest, true
	}
	if i := strings.IndexByte(rest, 0); i >= 0 {
		rest = rest[:i]
	}
	return rest, true
}

// inSpan reports whether route key rk lies in [start, end), end empty
// meaning no upper bound.
func inSpan(rk, start, end string) bool { return rk >= start && (end == "" || rk < end) }

// routedIn reports whether raw's route key lies in [start, end).
func routedIn(raw, start, end string) bool {
	rk, ok := routeKeyOf(raw)
	return ok && inSpan(rk, start, end)
}

// familyPrefix returns the prefix of raw's family ("" for a user key).
func familyPrefix(raw string) string {
	p, _ := familyOf(raw)
	return p
}
