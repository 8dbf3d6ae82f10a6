package shrink

import (
	"fmt"
	"time"

	"shardsim/model/bugs"
	"shardsim/property"
	"shardsim/scenarios"
	"shardsim/simclock"
	"shardsim/timeline"
)

// Target is the failing run to shrink: its scenario, bugs and option
// overrides, and the property its failure must keep.
type Target struct {
	Scenario string
	Bugs     bugs.Set
	Options  map[string]string
	Property property.Name
	// CheckTimeout bounds each replay's history check (0: 10s). A replay
	// whose check runs out does not keep the failure.
	CheckTimeout time.Duration
}

// Size is how big a run is, by the measures a reader cares about.
type Size struct {
	Bytes  int    `json:"bytes"`  // the choice stream, trailing zeros dropped
	Draws  uint64 `json:"draws"`  // draws the run made
	Chosen int    `json:"chosen"` // draws that took a value other than zero (the quiet choice)
	Events uint64 `json:"events"` // events the loop ran
	Faults int    `json:"faults"` // fault records in the trace (timeline.Fault)
}

// Report is a shrink of one run.
type Report struct {
	Target  Target
	Before  Size
	After   Size
	Result  Result
	Final   scenarios.Result // the shrunk stream's run
	Initial scenarios.Result // the input's run
}

// tape is a byte-stream source that notes every draw; it reads exactly as
// simclock.NewBytes does, so what it notes replays through Config.Choices.
type tape struct {
	data  []byte
	pos   int
	draws []Draw
}

func (t *tape) Draw(n uint64) uint64 {
	var v uint64
	for i := 0; i < simclock.DrawWidth(n); i++ {
		v <<= 8
		if t.pos < len(t.data) {
			v |= uint64(t.data[t.pos])
		}
		t.pos++
	}
	v %= n
	t.draws = append(t.draws, Draw{Bound: n, Value: v})
	return v
}

func (t *tape) Fork(string) simclock.Source { return t }

func (t Target) config() scenarios.Config {
	timeout := t.CheckTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return scenarios.Config{Bugs: t.Bugs, Options: t.Options, CheckTimeout: timeout}
}

// Replay runs the target on stream and returns the run and its draws.
func (t Target) Replay(stream []byte) (scenarios.Result, []Draw, error) {
	cfg := t.config()
	tp := &tape{data: stream}
	cfg.Source = tp
	res, err := scenarios.Run(t.Scenario, cfg)
	return res, tp.draws, err
}

// keeps reports whether a run fails the way the target asks.
func (t Target) keeps(res scenarios.Result) bool {
	return res.Verdict == property.VerdictViolation && res.Property == t.Property
}

// Test is the target as a shrink Test.
func (t Target) Test() Test {
	return func(stream []byte) Outcome {
		res, draws, err := t.Replay(stream)
		return Outcome{Keeps: err == nil && t.keeps(res), Draws: draws}
	}
}

// Recording returns the choice stream of the run cfg describes (a seed or
// bytes), as bytes that replay it.
func Recording(scenario string, cfg scenarios.Config) ([]byte, scenarios.Result, error) {
	if cfg.Choices != nil {
		res, err := scenarios.Run(scenario, cfg)
		return cfg.Choices, res, err
	}
	cfg.Record = true
	res, err := scenarios.Run(scenario, cfg)
	return res.Recording, res, err
}

// measure replays stream once more with the trace collected, for its size.
func (t Target) measure(stream []byte) (Size, scenarios.Result, error) {
	cfg := t.config()
	cfg.Choices = stream
	var col timeline.Collector
	cfg.TraceOut = &col
	res, err := scenarios.Run(t.Scenario, cfg)
	if err != nil {
		return Size{}, res, err
	}
	if err := col.Err(); err != nil {
		return Size{}, res, err
	}
	_, draws, err := t.Replay(stream)
	if err != nil {
		return Size{}, res, err
	}
	chosen := 0
	for _, d := range draws {
		if d.Value != 0 {
			chosen++
		}
	}
	return Size{Bytes: len(Encode(draws)), Draws: res.Draws, Chosen: chosen, Events: res.Events, Faults: timeline.Faults(col.Records())}, res, nil
}

// Shrink minimises the failing run cfg describes (a seed or a choice
// stream of t.Scenario with t's bugs and options). An empty t.Property
// keeps whatever property the input violates.
func Shrink(t Target, cfg scenarios.Config, opt Options) (Report, error) {
	cfg.Bugs, cfg.Options = t.Bugs, t.Options
	stream, initial, err := Recording(t.Scenario, cfg)
	if err != nil {
		return Report{}, err
	}
	if initial.Verdict != property.VerdictViolation {
		return Report{}, fmt.Errorf("the input run does not fail (verdict %s): nothing to shrink", initial.Verdict)
	}
	if t.Property == "" {
		t.Property = initial.Property
	}
	before, _, err := t.measure(stream)
	if err != nil {
		return Report{}, err
	}
	res, err := Minimise(stream, t.Test(), opt)
	if err != nil {
		return Report{}, fmt.Errorf("%v (%s; it fails with %s)", err, t.Property, initial.Property)
	}
	after, final, err := t.measure(res.Stream)
	if err != nil {
		return Report{}, err
	}
	if !t.keeps(final) {
		return Report{}, fmt.Errorf("shrink: the shrunk stream replays to %s %s, not %s", final.Verdict, final.Property, t.Property)
	}
	return Report{Target: t, Before: before, After: after, Result: res, Final: final, Initial: initial}, nil
}
