package coord_test

import (
	"shardsim/checker/coordcheck"
	"shardsim/model/coord"
	"shardsim/property"
)

// init installs checker/coordcheck's durable rules as the judges of the
// package's internal tests (see judges_test.go).
func init() {
	coord.Judges = coord.StateJudges{
		State: func(s *coord.Snapshot) error { return asError(coordcheck.CheckState(s)) },
		Step:  func(p, n *coord.Snapshot) error { return asError(coordcheck.CheckStep(p, n)) },
		TenantStep: func(p, n *coord.Snapshot, t coord.TenantID) error {
			return asError(coordcheck.CheckTenantStep(p, n, t))
		},
		AcceptedLease: func(p *coord.Snapshot, l coord.Lease) error { return asError(coordcheck.CheckAcceptedLease(p, l)) },
		Refusal: func(s *coord.Snapshot, t coord.TenantID, named []coord.RunID, errText string) error {
			return asError(coordcheck.CheckAnswer(s, coordcheck.Seen{Tenant: t, Named: named, Err: errText}))
		},
	}
}

// asError keeps a nil violation nil as an error.
func asError(v *property.Violation) error {
	if v == nil {
		return nil
	}
	return v
}
