package keymovecheck

import "fmt"

// Violation is one broken property. (It becomes property.Violation when the
// shared property package lands.)
type Violation struct {
	Property string
	Detail   string
}

// Error renders the violation as "property: detail".
func (v *Violation) Error() string { return v.Property + ": " + v.Detail }

// Property names of the catalog this package checks.
const (
	SingleSwap         = "KM.SingleSwap"
	NoDualMapping      = "KM.NoDualMapping"
	VerifiedBeforeSwap = "KM.VerifiedBeforeSwap"
	NoLoss             = "KM.NoLoss"
	Idempotent         = "KM.Idempotent"
	Completes          = "KM.Completes"
	Linearizable       = "KM.Linearizable"
)

func violation(p, format string, args ...any) *Violation {
	return &Violation{Property: p, Detail: fmt.Sprintf(format, args...)}
}
