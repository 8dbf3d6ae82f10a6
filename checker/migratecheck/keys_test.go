package migratecheck

import "testing"

// familyOf's shortcut for user keys holds only while every prefix it
// would otherwise try starts with internalMark.
func TestPrefixesStartWithMark(t *testing.T) {
	for _, p := range append([]string{localPrefix}, familyPrefixes...) {
		if p == "" || p[0] != internalMark {
			t.Fatalf("prefix %q does not start with %q", p, internalMark)
		}
	}
}
