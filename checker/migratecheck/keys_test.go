package migratecheck

import (
	"math/rand"
	"strings"
	"testing"
)

// familyOf's shortcut for user keys holds only while every prefix it
// would otherwise try starts with internalMark.
func TestPrefixesStartWithMark(t *testing.T) {
	for _, p := range append([]string{localPrefix}, familyPrefixes...) {
		if p == "" || p[0] != internalMark {
			t.Fatalf("prefix %q does not start with %q", p, internalMark)
		}
	}
}

// familyOfByScan is familyOf as it was written before it indexed the
// prefixes by their second byte: every prefix tried, the longest match won.
func familyOfByScan(raw string) (prefix string, routed bool) {
	if raw == "" || raw[0] != internalMark {
		return "", true
	}
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

// familyOf answers as the scan over every prefix does, on every prefix,
// its extensions, its truncations and random keys made of prefix pieces.
func TestFamilyOfAgreesWithScan(t *testing.T) {
	all := append([]string{localPrefix, "", "!", "!x|", "k1"}, familyPrefixes...)
	var cases []string
	for _, p := range all {
		for i := 0; i <= len(p); i++ {
			cases = append(cases, p[:i], p[:i]+"k", p+"\x00\x00\x00\x02k1s", p+"meta|d|k")
		}
	}
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 20000; i++ {
		a, b := all[r.Intn(len(all))], all[r.Intn(len(all))]
		cases = append(cases, a+b[min(len(b), r.Intn(4)):])
	}
	families := 0
	for _, k := range cases {
		gp, gr := familyOf(k)
		wp, wr := familyOfByScan(k)
		if gp != wp || gr != wr {
			t.Fatalf("familyOf(%q) = %q %v, want %q %v", k, gp, gr, wp, wr)
		}
		if wp != "" && wp != localPrefix {
			families++
		}
	}
	if families < 1000 {
		t.Fatalf("only %d keys of a family: the cases test little", families)
	}
}
