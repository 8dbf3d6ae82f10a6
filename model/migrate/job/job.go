// Package job is the SplitJob record: the durable state of one range
// migration, its phase machine, and where it lives in the metadata store
// (live jobs, the live-job pointer, the id allocator and the bounded
// history).
//
// Every phase change is a compare-and-swap on the previous record, so a
// migrator that lost leadership or crashed resumes from whatever the record
// says.
package job

import (
	"fmt"
	"slices"
	"strings"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
)

// Phase is a SplitJob phase.
type Phase uint8

// The phases.
const (
	Planned Phase = iota + 1
	Backfill
	Fence
	DeltaCopy
	Cutover
	Cleanup
	Done
	Failed
	Abandoning
	Abandoned
)

// phaseNames names the phases by number (an array, not a map: every
// decoded record and every phase line looks its phase up).
var phaseNames = [...]string{
	Planned: "PLANNED", Backfill: "BACKFILL", Fence: "FENCE", DeltaCopy: "DELTA_COPY",
	Cutover: "CUTOVER", Cleanup: "CLEANUP", Done: "DONE", Failed: "FAILED",
	Abandoning: "ABANDONING", Abandoned: "ABANDONED",
}

// valid reports whether p is one of the phases.
func (p Phase) valid() bool { return p >= Planned && p <= Abandoned }

// String names the phase as the design does.
func (p Phase) String() string {
	if p.valid() {
		return phaseNames[p]
	}
	return fmt.Sprintf("Phase(%d)", uint8(p))
}

// Terminal reports whether p is DONE or ABANDONED.
func (p Phase) Terminal() bool { return p == Done || p == Abandoned }

// BeforeCutover reports whether a job in p (or FAILED with retry phase p)
// may still be abandoned.
func (p Phase) BeforeCutover() bool { return p >= Planned && p <= DeltaCopy }

// Allowed reports whether the state machine has the edge from -> to:
// the forward chain, any pre-DONE phase to FAILED and back to the phase it
// failed in, and abandon from before CUTOVER.
func Allowed(from, to Phase, retry Phase) bool {
	switch {
	case from >= Planned && from < Done && to == from+1 && from != Failed:
		return true
	case to == Failed:
		return from >= Planned && from < Done
	case from == Failed && to == retry:
		return true
	case to == Abandoning:
		return from.BeforeCutover() || (from == Failed && retry.BeforeCutover())
	case from == Abandoning && to == Abandoned:
		return true
	}
	return false
}

// Bracket is one key family's export progress within a copy pass.
type Bracket struct {
	Family keys.Family
	Cursor []byte // opaque mvcc cursor
	Done   bool
	Seq    uint64 // last import batch acknowledged
}

// SplitJob is the durable migration record.
type SplitJob struct {
	ID            uint64
	SourceRouteID uint64
	SourceGroup   int
	TargetGroup   int
	SplitKey      string
	SourceStart   string // start of the source route (the span a cutover read fence covers begins here)
	MovingEnd     string // end of the moving span (the source route's end)
	MovingRouteID uint64 // the WriteFenced route, once FENCE published it

	Phase          Phase
	SnapshotTS     hlc.TS
	FenceTS        hlc.TS
	CutoverVersion uint64
	MaxImportedTS  hlc.TS
	Pass           uint8 // copy pass of Brackets: 1 BACKFILL, 2 DELTA_COPY
	Brackets       []Bracket

	StagedCleared bool // CLEANUP: staged visibility turned off
	SourceCleaned bool // CLEANUP: moved source versions deleted

	RetryPhase       Phase // only while FAILED
	AbandonFromPhase Phase // only while ABANDONING/ABANDONED
	LastError        string
	Retries          uint32

	CreatedAtMs  int64
	TerminalAtMs int64
	Writes       uint64 // bumped on every write: a read-back identifies our own write

	// Layer 2.
	TrackerArmed    bool       // the source tracks admitted timestamps (and pins retention) for the job
	MinReadTS       hlc.TS     // the source's compaction watermark when the tracker was armed
	FenceVersion    uint64     // catalog version of the FENCE CAS
	DeltaFloor      hlc.TS     // DELTA_COPY copies (DeltaFloor, FenceTS]
	ReadFence       FenceState // the cutover read fence on the source voters
	ExpectedCutover uint64     // the catalog version CUTOVER will have (set while ARMING)
	CutoverFloor    hlc.TS     // the target's write floor the CUTOVER route carries
	Disarmed        bool       // CLEANUP: read fences disarmed, tracker and retention pin released
}

// FenceState is the state of a job's cutover read fence. ARMING is the
// durable intent: some source voters may be armed, so recovery must finish
// arming or clear them; ARMED means every current source voter is armed;
// CLEARING means a failed CUTOVER is clearing them.
type FenceState uint8

// Read fence states.
const (
	FenceNone FenceState = iota
	FenceArming
	FenceArmed
	FenceClearing
)

var fenceNames = [...]string{"NONE", "ARMING", "ARMED", "CLEARING"}

// String names the state.
func (s FenceState) String() string {
	if int(s) < len(fenceNames) {
		return fenceNames[s]
	}
	return fmt.Sprintf("FenceState(%d)", uint8(s))
}

// Moving returns the span that moves to the target.
func (j SplitJob) Moving() keys.Span { return keys.Span{Start: j.SplitKey, End: j.MovingEnd} }

// ResetBrackets starts copy pass pass with fresh cursors for every family
// that is exported: transaction lock rows are drained before fence_ts,
// never exported.
//
// The brackets go to a new slice: copies of the record share the old one
// (see SetBracket).
func (j *SplitJob) ResetBrackets(pass uint8) {
	j.Pass = pass
	j.Brackets = make([]Bracket, 0, len(keys.Families()))
	for _, f := range keys.Families() {
		if f != keys.FamilyTxnLock {
			j.Brackets = append(j.Brackets, Bracket{Family: f})
		}
	}
}

// SetBracket sets bracket i in a copy of the brackets. Copies of a record
// (a SplitJob is a value) share its brackets: a bracket is never changed
// in place, nor a cursor's bytes (a new cursor replaces the old), so the
// migrator's steps can work on copies of its record and a failed step
// leaves the record it was given as it was, without a deep copy per step.
func (j *SplitJob) SetBracket(i int, b Bracket) {
	j.Brackets = slices.Clone(j.Brackets)
	j.Brackets[i] = b
}

// SourceSpan returns the source route's span before the split: the moving
// span and the part that stays.
func (j SplitJob) SourceSpan() keys.Span { return keys.Span{Start: j.SourceStart, End: j.MovingEnd} }

// AllBracketsDone reports whether every bracket of the current pass is done.
func (j SplitJob) AllBracketsDone() bool {
	if len(j.Brackets) == 0 {
		return false
	}
	for _, b := range j.Brackets {
		if !b.Done {
			return false
		}
	}
	return true
}

// BracketID identifies a bracket's import stream: pass and family.
func BracketID(pass uint8, f keys.Family) uint32 { return uint32(pass)<<8 | uint32(f) }

// Clone returns a deep copy (its cursors as ownCursors makes them).
func (j SplitJob) Clone() SplitJob {
	j.Brackets = append([]Bracket(nil), j.Brackets...)
	ownCursors(j.Brackets)
	return j
}

// ownCursors replaces the brackets' cursors with copies that share one
// allocation, each in a disjoint window whose capacity ends at its length,
// so changing or appending to one never reaches another. An empty cursor
// becomes nil.
func ownCursors(bs []Bracket) {
	total := 0
	for _, b := range bs {
		total += len(b.Cursor)
	}
	buf := make([]byte, 0, total)
	for i := range bs {
		c := bs[i].Cursor
		if len(c) == 0 {
			bs[i].Cursor = nil
			continue
		}
		at := len(buf)
		buf = append(buf, c...)
		bs[i].Cursor = buf[at:len(buf):len(buf)]
	}
}

// Check validates the record's structural invariants.
func (j SplitJob) Check() error {
	var errs []string
	if j.ID == 0 {
		errs = append(errs, "zero id")
	}
	if (j.Phase == Failed) != (j.RetryPhase != 0) {
		errs = append(errs, "retry_phase set iff FAILED")
	}
	if (j.Phase == Abandoning || j.Phase == Abandoned) != (j.AbandonFromPhase != 0) {
		errs = append(errs, "abandon_from_phase set iff ABANDONING/ABANDONED")
	}
	if j.Phase == Failed && !(j.RetryPhase >= Planned && j.RetryPhase < Done) {
		errs = append(errs, "retry_phase out of range")
	}
	if j.SourceGroup == j.TargetGroup {
		errs = append(errs, "source and target group equal")
	}
	if len(errs) > 0 {
		return fmt.Errorf("job %d: %s", j.ID, strings.Join(errs, "; "))
	}
	return nil
}

// String renders the job briefly.
func (j SplitJob) String() string {
	s := fmt.Sprintf("j%d %s r%d g%d->g%d %s", j.ID, j.Phase, j.SourceRouteID, j.SourceGroup, j.TargetGroup, j.Moving())
	if j.Phase == Failed {
		s += " retry=" + j.RetryPhase.String()
	}
	if j.AbandonFromPhase != 0 {
		s += " from=" + j.AbandonFromPhase.String()
	}
	return s
}
