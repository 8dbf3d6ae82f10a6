package checker

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"shardsim/property"
)

// register is a one-value register: an input of -1 reads, any other
// writes; a read's output is the value it saw.
var register = porcupine.Model{
	Init: func() any { return 0 },
	Step: func(state, input, output any) (bool, any) {
		if in := input.(int); in >= 0 {
			return true, in
		}
		return output.(int) == state.(int), state
	},
}

func ops(readSees int) []porcupine.Operation {
	return []porcupine.Operation{
		{ClientId: 0, Input: 7, Call: 0, Return: 10},
		{ClientId: 1, Input: -1, Output: readSees, Call: 20, Return: 30},
	}
}

// A history that linearizes is OK within a generous budget, and Unknown
// with a budget no check can meet: however porcupine's race between its
// answer and its timer goes, an overrun is never reported as a pass.
func TestCheckWithinCallsAnOverrunUnknown(t *testing.T) {
	if got := CheckWithin(register, ops(7), time.Minute); got != property.VerdictOK {
		t.Fatalf("good history within a minute: %s, want ok", got)
	}
	for i := 0; i < 50; i++ {
		if got := CheckWithin(register, ops(7), time.Nanosecond); got != property.VerdictUnknown {
			t.Fatalf("good history within 1ns (try %d): %s, want unknown", i, got)
		}
	}
	if got := CheckWithin(register, ops(3), time.Minute); got != property.VerdictViolation {
		t.Fatalf("stale read: %s, want a violation", got)
	}
}
