// Package checker holds what the per-protocol checkers share: turning a
// porcupine result into a property verdict, bounding a check by its time
// budget (CheckWithin), and picking porcupine's longest partial
// linearization in a canonical way (CanonicalLongest). The checkers themselves live
// in one package per protocol (kvcheck, coordcheck, migratecheck, keymovecheck), apart
// from the code they judge: a protocol package never imports a checker.
//
// Checkers only observe. They never feed back into the world, so they may
// be as slow or as parallel as they like (porcupine uses goroutines)
// without touching determinism. Every checker reports a failed property as
// a *property.Violation.
package checker

import (
	"slices"
	"time"

	"github.com/anishathalye/porcupine"

	"shardsim/property"
)

// Verdict maps a porcupine result onto a property verdict: Ok holds,
// Illegal is a violation, and anything else (porcupine's Unknown, when it
// ran out of time) could not be decided.
func Verdict(r porcupine.CheckResult) property.Verdict {
	switch r {
	case porcupine.Ok:
		return property.VerdictOK
	case porcupine.Illegal:
		return property.VerdictViolation
	}
	return property.VerdictUnknown
}

// CheckWithin runs porcupine's check of history against model with the
// wall-time budget timeout and maps the result onto a verdict (Verdict).
// A check that found no violation but ran past its budget is Unknown:
// porcupine races its answer against its timer, so an overrun check could
// otherwise come back either way, and a run's verdict would depend on the
// scheduler. A violation found late is still a violation (the
// counterexample is real). The wall clock bounds the checker only; it
// never feeds the world.
func CheckWithin(model porcupine.Model, history []porcupine.Operation, timeout time.Duration) property.Verdict {
	start := time.Now()
	verdict := Verdict(porcupine.CheckOperationsTimeout(model, history, timeout))
	if verdict == property.VerdictOK && time.Since(start) > timeout {
		return property.VerdictUnknown
	}
	return verdict
}

// CanonicalLongest returns the longest of porcupine's partial
// linearizations (LinearizationInfo.PartialLinearizations of one
// partition), the least in index order among equally long ones. Porcupine
// hands them over in map order; a report built from one of them is
// written into the trace, so the run's digest must not depend on that
// order when two orders get equally far. parts must not be empty.
func CanonicalLongest(parts [][]int) []int {
	return slices.MinFunc(parts, func(a, b []int) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return slices.Compare(a, b)
	})
}
