// Package bugs is the registry of injectable known-wrong protocol variants.
//
// Each Bug names a mistake that a real design or review once made. Protocol
// code asks a Set whether a bug is switched on and, if so, behaves wrongly in
// exactly that way. The harness must then report a violation of one of the
// bug's properties within Budget seeds of a sweep; that is how we know every
// checker can fail. With no bug switched on, the same sweeps must pass.
package bugs

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"shardsim/property"
)

// Bug describes one injectable wrong variant of a protocol.
type Bug struct {
	Name        string          // stable identifier, e.g. "coord.no-fence-check"
	Protocol    string          // "coord", "migrate", ...
	Description string          // the wrong behaviour, in one sentence
	Properties  []property.Name // properties expected to catch it (any one suffices)
	Scenario    string          // scenario whose sweep must catch it
	Budget      int             // the sweep must catch it within seeds 1..Budget
}

var registry = map[string]Bug{}

// register adds b to the registry; a duplicate name is a programming error.
func register(b Bug) {
	if _, dup := registry[b.Name]; dup {
		panic("bugs: duplicate registration of " + b.Name)
	}
	if b.Budget <= 0 || b.Budget > 500 {
		panic("bugs: budget out of range for " + b.Name)
	}
	registry[b.Name] = b
}

// Lookup returns the bug registered under name.
func Lookup(name string) (Bug, bool) {
	b, ok := registry[name]
	return b, ok
}

// All returns every registered bug, sorted by name.
func All() []Bug {
	out := make([]Bug, 0, len(registry))
	for _, b := range registry {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ForProtocol returns the registered bugs of one protocol, sorted by name.
func ForProtocol(protocol string) []Bug {
	var out []Bug
	for _, b := range All() {
		if b.Protocol == protocol {
			out = append(out, b)
		}
	}
	return out
}

// Set is an immutable set of switched-on bugs. The zero Set has none on.
type Set struct {
	on []string // sorted, unique
}

// None is the set with every bug off.
var None = Set{}

// Parse builds a Set from bug names, rejecting unknown ones.
func Parse(names ...string) (Set, error) {
	seen := map[string]bool{}
	var on []string
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if _, ok := registry[n]; !ok {
			return Set{}, fmt.Errorf("unknown bug %q (simrun list shows the registered bugs)", n)
		}
		if !seen[n] {
			seen[n] = true
			on = append(on, n)
		}
	}
	sort.Strings(on)
	return Set{on: on}, nil
}

// MustParse is Parse for names known at compile time (tests, tables).
func MustParse(names ...string) Set {
	s, err := Parse(names...)
	if err != nil {
		panic(err)
	}
	return s
}

// Has reports whether the named bug is switched on.
func (s Set) Has(name string) bool {
	for _, n := range s.on {
		if n == name {
			return true
		}
	}
	return false
}

// Names returns the switched-on bug names, sorted.
func (s Set) Names() []string { return append([]string(nil), s.on...) }

// Equal reports whether s and o switch on the same bugs.
func (s Set) Equal(o Set) bool { return slices.Equal(s.on, o.on) }

// Empty reports whether no bug is switched on.
func (s Set) Empty() bool { return len(s.on) == 0 }

// String renders the set as a comma-separated list, or "none".
func (s Set) String() string {
	if len(s.on) == 0 {
		return "none"
	}
	return strings.Join(s.on, ",")
}
