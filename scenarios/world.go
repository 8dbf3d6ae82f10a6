package scenarios

import (
	"fmt"

	"shardsim/nemesis"
	"shardsim/property"
	"shardsim/reach"
	"shardsim/simclock"
)

// World bundles what every scenario needs: the loop and its trace, the root
// choice stream (recorded when asked), the swarm options, and the first
// violation found.
type World struct {
	Name      string
	Cfg       Config
	Loop      *simclock.Loop
	Trace     *simclock.Trace
	Choices   *simclock.Choices
	Swarm     *nemesis.Swarm
	Ops       *OpTrace // traces client operations no network traces (op.invoke, op.return)
	recording *simclock.Recording

	stats []Stat
	reach reach.Counts

	verdict property.Verdict
	finding *property.Violation // the violation, or what could not be decided
	cut     bool                // the Explorer cut the run: later findings do not count
}

// visit hands the state after an event to the Explorer. A step that failed
// ends the run anyway and is not cut: its finding stands.
func (w *World) visit() bool {
	if w.verdict == property.VerdictViolation {
		return true
	}
	if !w.Cfg.Explorer.Visit(w.Loop) {
		w.cut = true
		return false
	}
	return true
}

// tailSize is how many trace records a violation report shows.
const tailSize = 40

// newTrace is the trace of a run: under a model checker, which reads
// neither the tail nor the digest of the millions of runs it makes (it
// replays its witness), one that only counts its records; otherwise one
// that keeps a report's tail and the run's digest.
func newTrace(cfg Config) *simclock.Trace {
	if cfg.Explorer != nil && cfg.TraceOut == nil {
		return simclock.NewCountingTrace()
	}
	return simclock.NewReusedTrace(tailSize) // read by Result, before the run's Loop.Close
}

// NewWorld builds the world of one run of scenario name.
func NewWorld(name string, cfg Config, budget simclock.Budget) *World {
	tr := newTrace(cfg)
	if cfg.TraceOut != nil {
		tr.WriteJSON(cfg.TraceOut)
	}
	var root *simclock.Choices
	w := &World{Name: name, Cfg: cfg, Trace: tr, Ops: &OpTrace{}, verdict: property.VerdictOK}
	w.Loop = simclock.NewLoop(tr, budget)
	switch {
	case cfg.Explorer != nil:
		w.Loop.TrackStates(w.visit)
		root = simclock.NewFromSource(w.Loop.TrackDraws(cfg.Explorer.Begin(w.Loop)))
	case cfg.Source != nil:
		root = simclock.NewFromSource(cfg.Source)
	case cfg.Choices != nil:
		root = simclock.NewBytes(cfg.Choices)
	default:
		root = simclock.NewSeeded(cfg.Seed)
	}
	if cfg.Record {
		root, w.recording = simclock.NewRecorder(root)
	}
	w.Choices = root
	w.Loop.OrderBy(root.Fork("loop/order"))
	w.Swarm = nemesis.NewSwarm(root.Fork("swarm"), cfg.Options)
	return w
}

// Fail records v (the first violation wins) and stops the loop. A nil v
// is no violation, so a checker's answer can be passed as it is.
func (w *World) Fail(v *property.Violation) {
	if v == nil || w.verdict == property.VerdictViolation || w.cut {
		return
	}
	w.verdict, w.finding = property.VerdictViolation, v
	d := w.Loop.Rec("violation", "").Str("property", string(v.Property))
	if v.Subject.ID != "" {
		d.Str("subject_kind", string(v.Subject.Kind)).Str("subject", v.Subject.ID)
	}
	d.Text(v.Detail).End()
	w.Loop.Stop()
}

// Judge records the outcome of a history check: a violation fails the run,
// an undecided check (v says which property and why) marks it unknown.
func (w *World) Judge(verdict property.Verdict, v *property.Violation) {
	switch verdict {
	case property.VerdictViolation:
		w.Fail(v)
	case property.VerdictUnknown:
		w.undecided(v)
	}
}

// undecided records that a check could not decide (unless a violation is
// already known).
func (w *World) undecided(v *property.Violation) {
	if w.verdict != property.VerdictOK || v == nil || w.cut {
		return
	}
	w.verdict, w.finding = property.VerdictUnknown, v
}

// Failed reports whether a violation has been recorded.
func (w *World) Failed() bool { return w.verdict == property.VerdictViolation }

// OptionsError reports bad -opt overrides as a usage error.
func (w *World) OptionsError() error {
	if w.Cfg.describe != nil {
		*w.Cfg.describe = w.Swarm.Specs()
		return errDescribed
	}
	if err := w.Swarm.Err(); err != nil {
		return err
	}
	if unused := w.Swarm.Unused(); len(unused) > 0 {
		return fmt.Errorf("scenario %s has no option %q", w.Name, unused[0])
	}
	return nil
}

// Count adds delta to the named run counter.
func (w *World) Count(name string, delta int64) {
	for i := range w.stats {
		if w.stats[i].Name == name {
			w.stats[i].Value += delta
			return
		}
	}
	w.stats = append(w.stats, Stat{Name: name, Value: delta})
}

// Reach records that the run reached the named point of its scenario's
// reachability group (see package reach and Scenario.Reach). Counts never
// reach the trace, so they cannot change a digest. Under a model checker
// nothing is counted: its result carries no counts (see Result), and it
// makes millions of runs.
func (w *World) Reach(name string) { w.ReachN(name, 1) }

// ReachN records that the run reached the named point n times.
func (w *World) ReachN(name string, n int64) {
	if w.Cfg.Explorer == nil {
		w.reach.Add(name, n)
	}
}

// Result summarises the run.
func (w *World) Result() Result {
	r := Result{
		Scenario:    w.Name,
		Seed:        w.Cfg.seed(),
		FromBytes:   w.Cfg.Choices != nil || w.Cfg.Source != nil || w.Cfg.Explorer != nil,
		ChoicesHash: w.Cfg.choicesHash(),
		Bugs:        w.Cfg.Bugs,
		Verdict:     w.verdict,
		Events:      w.Loop.Events(),
		Records:     w.Trace.Len(),
		VirtualNs:   int64(w.Loop.Now()),
		Swarm:       w.Swarm,
		Draws:       w.Choices.Draws(),
		Stats:       append([]Stat(nil), w.stats...),
		Cut:         w.cut,
	}
	if w.Cfg.Explorer == nil { // a model checker reads neither (see newTrace)
		r.Digest, r.Reach = w.Trace.Digest(), w.reach.Sorted()
	}
	if w.finding != nil {
		r.Property, r.Detail, r.Subject = w.finding.Property, w.finding.Detail, w.finding.Subject
	}
	if w.verdict != property.VerdictOK {
		r.Tail = w.Trace.Tail() // rendered only for the report of a run that did not pass
	}
	if w.recording != nil {
		r.Recording = append([]byte(nil), w.recording.Bytes()...)
	}
	return r
}
