package scenarios

import (
	"encoding/hex"
	"fmt"

	"github.com/anishathalye/porcupine"
	"io"
	"sort"
	"time"

	"github.com/zeebo/blake3"

	"shardsim/model/bugs"
	"shardsim/nemesis"
	"shardsim/property"
	"shardsim/reach"
	"shardsim/simclock"
)

// Config is everything a run depends on besides the scenario's code.
type Config struct {
	Seed     uint64            // seeds the PRNG driver (ignored when Choices is set)
	Choices  []byte            // when non-nil, drive the run from these bytes (fuzz input, replay)
	Source   simclock.Source   // when non-nil, drives the run (shrinker, model checker); Seed and Choices are ignored
	Bugs     bugs.Set          // injected bugs
	Options  map[string]string // overrides for swarm options, by name
	TraceOut io.Writer         // when set, every trace record is written here as a JSON line
	Record   bool              // keep the run's choice stream in Result.Recording

	// Histories, when set, receives every history a porcupine check judges
	// (or would judge, had the run not already failed), with its model and
	// a label, for reports such as simrun run -viz. It never changes a run.
	Histories func(label string, model porcupine.Model, ops []porcupine.Operation)

	// TLATrace, when set, receives the run's steps as a TLA+ trace module
	// named TLATraceModule (see tla/tlatrace), for scenarios that map onto
	// a specification of tla/; others ignore it.
	TLATrace       io.Writer
	TLATraceModule string

	// CheckTimeout bounds the wall time of history checks (porcupine). A
	// check that runs out reports Unknown. Zero means 30s.
	CheckTimeout time.Duration

	// describe, when set, receives the run's option specs right after they
	// are drawn, and the run stops there (Options).
	describe *[]nemesis.OptionSpec

	// Explorer, when set, drives the run for a model checker: it supplies
	// the choices (Source is ignored) and sees the world's state after
	// every event (see Explorer).
	Explorer Explorer
}

// seed is the run's seed: none (0) when choices or a source drive it.
func (c Config) seed() uint64 {
	if c.Choices != nil || c.Source != nil || c.Explorer != nil {
		return 0
	}
	return c.Seed
}

// choicesHash is the hex blake3 hash of the choice bytes, "" for a seeded run.
func (c Config) choicesHash() string {
	if c.Choices == nil {
		return ""
	}
	return ChoicesHash(c.Choices)
}

// ChoicesHash names a run driven by choice bytes, as a seed names a seeded
// one: the hex blake3-256 hash of the bytes.
func ChoicesHash(choices []byte) string {
	sum := blake3.Sum256(choices)
	return hex.EncodeToString(sum[:])
}

// Explorer is what a model checker plugs into a world (Config.Explorer).
type Explorer interface {
	// Begin receives the world's loop, with state tracking on
	// (simclock.Loop.TrackStates), before anything is drawn or scheduled,
	// and returns the source the world's choices come from (every draw of
	// it is folded into the world's state).
	Begin(l *simclock.Loop) simclock.Source
	// Visit runs after every event, after the world's checkers. Returning
	// false cuts the run there (the state was explored before): the world
	// then stops, and whatever its end-of-run checks would say is not a
	// finding (Result.Cut), since the run did not end.
	Visit(l *simclock.Loop) bool
}

// showHistory hands a history to Config.Histories, if set.
func (c Config) showHistory(label string, model porcupine.Model, ops []porcupine.Operation) {
	if c.Histories != nil {
		c.Histories(label, model, ops)
	}
}

// traceModule is the name of the TLA+ trace module (default Trace).
func (c Config) traceModule() string {
	if c.TLATraceModule == "" {
		return "Trace"
	}
	return c.TLATraceModule
}

func (c Config) checkTimeout() time.Duration {
	if c.CheckTimeout <= 0 {
		return 30 * time.Second
	}
	return c.CheckTimeout
}

// Result is the outcome of one run.
type Result struct {
	Scenario    string
	Seed        uint64 // the seed, when the run was not driven by choices
	FromBytes   bool   // driven by Config.Choices rather than a seed
	ChoicesHash string // with FromBytes: the hex blake3 hash of the choice bytes, which name the run instead of a seed
	Bugs        bugs.Set
	Verdict     property.Verdict
	Property    property.Name    // the violated (or undecided) property, if any
	Detail      string           // what went wrong, in a sentence or a short block
	Subject     property.Subject // the entity the violation concerns, if it names one
	Events      uint64           // loop steps executed (one step may write several trace records, or none)
	Records     uint64           // trace records written, the violation record included
	VirtualNs   int64
	Digest      string // the hex blake3 digest of the trace ("" under a model checker: Config.Explorer)
	Swarm       *nemesis.Swarm
	Tail        []simclock.Record // the last trace records, for the report of a run that did not pass (nil when it passed)
	Recording   []byte            // the run's choice stream, when Config.Record
	Draws       uint64            // how many draws the run made
	Stats       []Stat            // what the run did (faults injected, operations), in a fixed order
	Reach       []reach.Count     // the reachability points the run reached, by name (nil under a model checker)
	Cut         bool              // an Explorer cut the run short (its verdict covers only the steps it ran)
}

// Stat is one named counter of a run.
type Stat struct {
	Name  string
	Value int64
}

// Stat returns the named counter, or 0.
func (r Result) Stat(name string) int64 {
	for _, s := range r.Stats {
		if s.Name == name {
			return s.Value
		}
	}
	return 0
}

// Scenario is a named, runnable world.
type Scenario struct {
	Name        string
	Description string
	Properties  []property.Name // the properties its checkers judge
	// Reach names the reachability group (package reach) whose every point
	// a sweep of the scenario must reach; empty for none.
	Reach string
	Run   func(cfg Config) (Result, error)
}

var registry = map[string]Scenario{}

// Register adds a scenario; a duplicate name is a programming error.
func Register(s Scenario) {
	if _, dup := registry[s.Name]; dup {
		panic("scenarios: duplicate " + s.Name)
	}
	registry[s.Name] = s
}

// Lookup returns the named scenario.
func Lookup(name string) (Scenario, error) {
	s, ok := registry[name]
	if !ok {
		return Scenario{}, fmt.Errorf("unknown scenario %q (simrun list shows the scenarios)", name)
	}
	return s, nil
}

// All returns the scenarios sorted by name.
func All() []Scenario {
	out := make([]Scenario, 0, len(registry))
	for _, s := range registry {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Run looks up a scenario and runs it once. A panic outside the world's
// loop (building the world, the end-of-run checks) is reported like one
// inside it (World.Run): as an H.Panic violation, never as a crash. Such a
// result has no digest, since the world never finished.
func Run(name string, cfg Config) (res Result, err error) {
	s, err := Lookup(name)
	if err != nil {
		return Result{}, err
	}
	defer func() {
		if p := recover(); p != nil {
			v := panicViolation(p, 0)
			res = Result{Scenario: name, Seed: cfg.seed(), FromBytes: cfg.Choices != nil || cfg.Source != nil, ChoicesHash: cfg.choicesHash(), Bugs: cfg.Bugs,
				Verdict: property.VerdictViolation, Property: v.Property, Detail: v.Detail}
			err = nil
		}
	}()
	return s.Run(cfg)
}
