package group

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// The grp.* records' text is byte for byte what fmt wrote before the lines
// were built by appending: a digest covers it.
func TestLogLinesMatchFmt(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		node, add, remove := rapid.IntRange(-1, 1<<20).Draw(t, "node"), rapid.IntRange(-1, 9).Draw(t, "add"), rapid.IntRange(-1, 9).Draw(t, "remove")
		term, view := rapid.Uint64().Draw(t, "term"), rapid.Uint64().Draw(t, "view")
		voters := rapid.SliceOfN(rapid.IntRange(-1, 99), 0, 5).Draw(t, "voters")
		if got, want := string(appendNodeTerm(nil, node, term)), fmt.Sprintf("node=%d term=%d", node, term); got != want {
			t.Fatalf("appendNodeTerm = %q, want %q", got, want)
		}
		if got, want := string(appendConfigLine([]byte("x"), add, remove, voters, view)), fmt.Sprintf("x+%d -%d -> %v minview=v%d", add, remove, voters, view); got != want {
			t.Fatalf("appendConfigLine = %q, want %q", got, want)
		}
	})
}
