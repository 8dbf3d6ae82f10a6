package modelcheck

import (
	"fmt"

	"shardsim/property"
	"shardsim/scenarios"
	"shardsim/simclock"
)

// ScenarioWorld is the World of a registered scenario run with cfg (its
// bugs and option overrides; Seed, Choices and Source are ignored). Every
// run is the real scenario: its protocol code, nemesis and checkers, with
// the loop tracking states (simclock.Loop.TrackStates).
func ScenarioWorld(name string, cfg scenarios.Config) World {
	return func(src simclock.Source, visit func(func() simclock.Digest) bool) (Outcome, error) {
		ex := &explorer{src: src, visit: visit}
		c := cfg
		c.Explorer, c.Source, c.Choices, c.Record, c.TraceOut = ex, nil, nil, false, nil
		res, err := scenarios.Run(name, c)
		if err != nil {
			return Outcome{}, err
		}
		if ex.loop == nil {
			return Outcome{}, fmt.Errorf("scenario %s does not support model checking (it ignores Config.Explorer)", name)
		}
		if ex.loop.EventBudgetHit() {
			return Outcome{}, fmt.Errorf("scenario %s: a run reached its event budget; the event count is not part of the state, so the search cannot go on (narrow the bounds)", name)
		}
		out := Outcome{Cut: res.Cut}
		switch res.Verdict {
		case property.VerdictViolation:
			out.Property = string(res.Property)
		case property.VerdictUnknown:
			out.Unknown = string(res.Property)
		}
		return out, nil
	}
}

// explorer is the scenarios.Explorer of one run.
type explorer struct {
	src    simclock.Source
	visit  func(func() simclock.Digest) bool
	loop   *simclock.Loop
	digest func() simclock.Digest // the loop's StateDigest, bound once per run
}

func (e *explorer) Begin(l *simclock.Loop) simclock.Source {
	e.loop, e.digest = l, l.StateDigest
	if v, ok := e.src.(view); ok { // a search's run: its tape knows the run before
		l.ReuseFolds(&v.t.folds, uint64(v.t.same))
	}
	return e.src
}

func (e *explorer) Visit(*simclock.Loop) bool { return e.visit(e.digest) }
