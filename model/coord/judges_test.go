package coord

import (
	"fmt"
	"os"
	"testing"
)

// The property checkers that judge this package's states live in
// checker/coordcheck, which imports this package and so cannot be
// imported by its internal tests. judges_ext_test.go, an external test
// file of this directory (package coord_test, compiled into the same test
// binary), installs them here before any test runs. Tests call them
// through judgeState and friends, which fail loudly if nothing was
// installed, so a test can never pass by judging nothing.

// StateJudges are the checkers the external test file installs. Each
// returns nil or the violation, as an error.
type StateJudges struct {
	State         func(s *Snapshot) error
	Step          func(prev, next *Snapshot) error
	TenantStep    func(prev, next *Snapshot, caller TenantID) error
	AcceptedLease func(prev *Snapshot, l Lease) error
	// Refusal judges what a refused request of caller learned from the
	// error text (C.TenantIsolation); named are the runs it named itself.
	Refusal func(s *Snapshot, caller TenantID, named []RunID, errText string) error
}

// Judges is set by judges_ext_test.go's init.
var Judges StateJudges

func judges() StateJudges {
	if Judges.State == nil || Judges.Step == nil || Judges.TenantStep == nil || Judges.AcceptedLease == nil || Judges.Refusal == nil {
		panic("coord tests: the property checkers were not installed (judges_ext_test.go)")
	}
	return Judges
}

func judgeState(s *Snapshot) error                     { return judges().State(s) }
func judgeStep(prev, next *Snapshot) error             { return judges().Step(prev, next) }
func judgeTenantStep(p, n *Snapshot, t TenantID) error { return judges().TenantStep(p, n, t) }
func judgeAcceptedLease(p *Snapshot, l Lease) error    { return judges().AcceptedLease(p, l) }

// TestMain refuses to run the package's tests without the judges.
func TestMain(m *testing.M) {
	if Judges.State == nil {
		fmt.Fprintln(os.Stderr, "coord tests: judges_ext_test.go did not install the property checkers")
		os.Exit(2)
	}
	os.Exit(m.Run())
}
