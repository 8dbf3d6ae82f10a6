// Package checker holds what the per-protocol checkers share: turning a
// porcupine result into a property verdict. The checkers themselves live
// in one package per protocol (kvcheck, coordcheck, migratecheck, keymovecheck), apart
// from the code they judge: a protocol package never imports a checker.
//
// Checkers only observe. They never feed back into the world, so they may
// be as slow or as parallel as they like (porcupine uses goroutines)
// without touching determinism. Every checker reports a failed property as
// a *property.Violation.
package checker

import (
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
