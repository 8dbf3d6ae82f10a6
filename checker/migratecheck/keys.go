package migratecheck

import "strings"

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
// an internal family is prefix + user key, optionally followed by a NUL
// byte and a suffix (a sequence number, a start timestamp); user keys
// never hold a NUL byte.
var familyPrefixes = []string{
	"!lst|meta|", "!lst|meta|d|", "!lst|itm|", "!lst|claim|",
	"!txn|lock|", "!txn|int|", "!txn|cmt|", "!txn|rb|",
}

// familyOf returns the prefix of raw's family ("" for a user key) and
// whether raw belongs to a route at all. The longest prefix wins:
// "!lst|meta|d|" extends "!lst|meta|".
func familyOf(raw string) (prefix string, routed bool) {
	if strings.HasPrefix(raw, localPrefix) {
		return localPrefix, false
	}
	for _, p := range familyPrefixes {
		if strings.HasPrefix(raw, p) && len(p) > len(prefix) {
			prefix = p
		}
	}
	return prefix, true
}

// routeKeyOf returns the user key raw belongs to, and whether it has one.
func routeKeyOf(raw string) (string, bool) {
	prefix, routed := familyOf(raw)
	if !routed {
		return "", false
	}
	rest := raw[len(prefix):]
	if i := strings.IndexByte(rest, 0); i >= 0 && prefix != "" {
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
