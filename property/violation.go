package property

import "fmt"

// Verdict is the outcome of judging a run or a history.
type Verdict string

// The three verdicts. Their text is part of the CLI's JSON and of corpus
// files, and must not change.
const (
	// VerdictOK: every property judged held.
	VerdictOK Verdict = "ok"
	// VerdictViolation: a property was violated.
	VerdictViolation Verdict = "violation"
	// VerdictUnknown: a check could not decide (for example porcupine ran
	// out of time). It is never reported as a pass.
	VerdictUnknown Verdict = "unknown"
)

// Violation is what every checker returns when a property fails: which
// property, why, and which entity it concerns, so that a report can show
// that entity's events rather than the trace's last lines. A nil
// *Violation means the check passed.
type Violation struct {
	Property Name
	Detail   string
	// Subject is the entity the violation is about (zero: none named).
	Subject Subject
}

// SubjectKind says what sort of entity a Subject names.
type SubjectKind string

// The entities reports know how to select events for.
const (
	// SubjectShard: a coordination shard, ID "run:<hex>/shard:<hex>".
	SubjectShard SubjectKind = "shard"
	// SubjectKey: a key of a KV store or a raw key of the migration.
	SubjectKey SubjectKind = "key"
	// SubjectJob: a split job, ID its decimal id.
	SubjectJob SubjectKind = "job"
)

// Subject names one entity of a world.
type Subject struct {
	Kind SubjectKind
	ID   string
}

// Violated returns a violation of p with a formatted detail.
func Violated(p Name, format string, args ...any) *Violation {
	return &Violation{Property: p, Detail: fmt.Sprintf(format, args...)}
}

// About returns v with its subject set (v may be nil: nil stays nil).
func (v *Violation) About(kind SubjectKind, id string) *Violation {
	if v == nil {
		return nil
	}
	c := *v
	c.Subject = Subject{Kind: kind, ID: id}
	return &c
}

// Error renders "Property: detail", so a violation can travel as an error.
func (v *Violation) Error() string { return string(v.Property) + ": " + v.Detail }

// First keeps the first violation it is given; checkers that judge
// event by event embed it, since after one violation the world stops and
// later ones are consequences.
type First struct {
	v *Violation
}

// Set records v unless a violation is already held or v is nil.
func (f *First) Set(v *Violation) {
	if f.v == nil && v != nil {
		f.v = v
	}
}

// Failf records a violation of p (if none is held yet).
func (f *First) Failf(p Name, format string, args ...any) {
	if f.v == nil {
		f.v = Violated(p, format, args...)
	}
}

// Err returns the first violation, or nil.
func (f *First) Err() *Violation { return f.v }
