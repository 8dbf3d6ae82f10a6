package scenarios

import (
	"fmt"

	"shardsim/linearizability"
	"shardsim/nemesis"
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
	recording *simclock.Recording

	stats []Stat

	verdict  linearizability.Verdict
	property string
	detail   string
}

// tailSize is how many trace records a violation report shows.
const tailSize = 40

// NewWorld builds the world of one run of scenario name.
func NewWorld(name string, cfg Config, budget simclock.Budget) *World {
	tr := simclock.NewTrace(tailSize)
	if cfg.TraceOut != nil {
		tr.WriteJSON(cfg.TraceOut)
	}
	var root *simclock.Choices
	if cfg.Choices != nil {
		root = simclock.NewBytes(cfg.Choices)
	} else {
		root = simclock.NewSeeded(cfg.Seed)
	}
	w := &World{Name: name, Cfg: cfg, Trace: tr, verdict: linearizability.Ok}
	if cfg.Record {
		root, w.recording = simclock.NewRecorder(root)
	}
	w.Choices = root
	w.Loop = simclock.NewLoop(tr, budget)
	w.Swarm = nemesis.NewSwarm(root.Fork("swarm"), cfg.Options)
	return w
}

// Fail records a violation of property (the first one wins) and stops the loop.
func (w *World) Fail(property, detail string) {
	if w.verdict == linearizability.Violation {
		return
	}
	w.verdict, w.property, w.detail = linearizability.Violation, property, detail
	w.Loop.Log("violation", "", property+": "+detail)
	w.Loop.Stop()
}

// Undecided records that a check could not decide (unless a violation is
// already known).
func (w *World) Undecided(property, detail string) {
	if w.verdict != linearizability.Ok {
		return
	}
	w.verdict, w.property, w.detail = linearizability.Unknown, property, detail
}

// Failed reports whether a violation has been recorded.
func (w *World) Failed() bool { return w.verdict == linearizability.Violation }

// Check records a violation if err is not nil.
func (w *World) Check(property string, err error) {
	if err != nil {
		w.Fail(property, err.Error())
	}
}

// OptionsError reports bad -opt overrides as a usage error.
func (w *World) OptionsError() error {
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

// Result summarises the run.
func (w *World) Result() Result {
	r := Result{
		Scenario:  w.Name,
		Seed:      w.Cfg.Seed,
		FromBytes: w.Cfg.Choices != nil,
		Bugs:      w.Cfg.Bugs,
		Verdict:   w.verdict,
		Property:  w.property,
		Detail:    w.detail,
		Events:    w.Loop.Events(),
		VirtualNs: int64(w.Loop.Now()),
		Digest:    w.Trace.Digest(),
		Swarm:     w.Swarm,
		Tail:      w.Trace.Tail(),
		Draws:     w.Choices.Draws(),
		Stats:     append([]Stat(nil), w.stats...),
	}
	if w.recording != nil {
		r.Recording = append([]byte(nil), w.recording.Bytes()...)
	}
	return r
}
