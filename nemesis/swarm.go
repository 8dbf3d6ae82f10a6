package nemesis

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"shardsim/simclock"
)

// Swarm is the fault mix of one run, in the spirit of swarm testing (and
// TigerBeetle's VOPR): each run switches each fault kind on or off and draws
// its rate, so different runs stress different combinations. The options are
// recorded in the order they were drawn and printed with the run.
type Swarm struct {
	choices   *simclock.Choices
	overrides map[string]string
	keys      []string
	values    []any
	specs     []drawnSpec // rendered as OptionSpecs only when asked for
	err       error
}

// NewSwarm draws options from choices (use a dedicated fork). overrides
// (name -> value, from the user's -opt flags) replace drawn values; the draw
// still happens, so overriding one option never shifts the others.
func NewSwarm(choices *simclock.Choices, overrides map[string]string) *Swarm {
	return &Swarm{choices: choices, overrides: overrides,
		keys: make([]string, 0, swarmRoom), values: make([]any, 0, swarmRoom), specs: make([]drawnSpec, 0, swarmRoom)}
}

// swarmRoom is the room a swarm's option lists start with: a run draws
// dozens of options (33 in coord, 53 in migrate, 74 in lists-migrate), and
// lists grown from empty by doubling reallocate at each of 1, 2, 4, ... 32.
const swarmRoom = 64

// Unused returns override names that no option consumed (typos).
func (s *Swarm) Unused() []string {
	var out []string
	for name := range s.overrides {
		if !s.has(name) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func (s *Swarm) has(name string) bool {
	for _, k := range s.keys {
		if k == name {
			return true
		}
	}
	return false
}

// override returns the user's value for name, if any.
func (s *Swarm) override(name string) (string, bool) {
	v, ok := s.overrides[name]
	return v, ok
}

func (s *Swarm) set(name string, v any) {
	for i, k := range s.keys {
		if k == name {
			s.values[i] = v
			return
		}
	}
	s.keys = append(s.keys, name)
	s.values = append(s.values, v)
}

// Rate draws whether a fault is on (with probability on) and, if so, its rate
// in [lo, hi]. A quiet choice stream turns every fault off.
func (s *Swarm) Rate(name string, on, lo, hi float64) float64 {
	r := 0.0
	if s.choices.Chance(on) {
		r = lo + (hi-lo)*float64(s.choices.Intn(1001))/1000
	}
	return s.rateOption(drawnSpec{name: name, kind: KindRate, drawn: rateBounds(lo, hi), accepted: rateBounds(0, 1)}, r)
}

// rateOption records rate option spec whose run value is r, unless the
// user overrides it with a probability.
func (s *Swarm) rateOption(spec drawnSpec, r float64) float64 {
	if o, ok := s.override(spec.name); ok {
		if f, err := strconv.ParseFloat(o, 64); err != nil {
			s.bad(spec.name, o)
		} else if !(f >= 0 && f <= 1) {
			s.outOfRange(spec, o)
		} else {
			r = f
		}
	}
	s.describe(spec)
	s.set(spec.name, roundRate(r))
	return r
}

// FollowRate records a rate that is not drawn: it is v, the value of the
// option named of (drawn before it, whose range it shows), unless the user
// overrides it. Adding one draws nothing, so no run of a seed or a choice
// file changes; it lets a search pin one habit (at 1, a chance that needs
// no draw) without pinning the option it follows.
func (s *Swarm) FollowRate(name, of string, v float64) float64 {
	spec := drawnSpec{name: name, kind: KindRate, drawn: rateBounds(v, v), accepted: rateBounds(0, 1)}
	for _, o := range s.specs {
		if o.name == of {
			spec.drawn = o.drawn
		}
	}
	return s.rateOption(spec, v)
}

// FixedDuration records a duration that is not drawn: it is v unless the
// user overrides it with one between 0 and maxD. Like FollowRate it draws
// nothing, so no run of a seed or a choice file changes; it lets a search
// place a habit in time.
func (s *Swarm) FixedDuration(name string, v, maxD time.Duration) time.Duration {
	spec := drawnSpec{name: name, kind: KindDuration, drawn: durationBounds(v, v), accepted: durationBounds(0, maxD)}
	return s.durationOption(spec, v, 0, maxD)
}

// durationOption applies a user's override of the duration option spec
// (which must lie in [min, maxD]) to v, the drawn or fixed value, and
// records the option's description and final value.
func (s *Swarm) durationOption(spec drawnSpec, v, min, maxD time.Duration) time.Duration {
	if o, ok := s.override(spec.name); ok {
		if d, err := time.ParseDuration(o); err != nil {
			s.bad(spec.name, o)
		} else if d < min || d > maxD {
			s.outOfRange(spec, o)
		} else {
			v = d
		}
	}
	s.describe(spec)
	s.set(spec.name, v.String())
	return v
}

// Err returns the first override that could not be parsed or lies outside
// the values its option accepts.
func (s *Swarm) Err() error { return s.err }

func (s *Swarm) bad(name, value string) {
	if s.err == nil {
		s.err = fmt.Errorf("option %s: cannot use %q", name, value)
	}
}

func (s *Swarm) outOfRange(spec drawnSpec, value string) {
	if s.err == nil {
		s.err = fmt.Errorf("option %s=%s: must be %s", spec.name, value, spec.render().Accepts())
	}
}

// sizeFactor bounds an integer or duration override at this many times the
// largest value the swarm draws. Sizes past the drawn range are allowed, so
// that a run can be pushed (a coordination run with twenty thousand keys per
// shard is how C.Convergence is shown to fail), but not without end: a kv
// run with a hundred thousand clients builds for minutes before it prints a
// line. simrun notes every override outside the drawn range before the run
// starts (Outside), since history checks grow fast with clients and
// operations.
const sizeFactor = 1000

// Int draws an integer option in [lo, hi]: a size or a count. An override
// must be at least 1 when every drawn value is (zero workers or clients
// would make a run that checks nothing), at least 0 otherwise, and at most
// sizeFactor times hi.
func (s *Swarm) Int(name string, lo, hi int) int {
	min := 0
	if lo >= 1 {
		min = 1
	}
	if lo < 0 {
		min = lo
	}
	maxN := max(hi*sizeFactor, min)
	return s.intOption(drawnSpec{name: name, kind: KindInt, drawn: intBounds(lo, hi), accepted: intBounds(min, maxN)}, lo, hi, min, maxN)
}

// Enum draws an integer option in [lo, hi] that is a mode or an index
// rather than a size: an override must lie in [lo, hi] too. It draws exactly
// as Int does.
func (s *Swarm) Enum(name string, lo, hi int) int {
	return s.intOption(drawnSpec{name: name, kind: KindEnum, drawn: intBounds(lo, hi), accepted: intBounds(lo, hi)}, lo, hi, lo, hi)
}

func (s *Swarm) intOption(spec drawnSpec, lo, hi, min, max int) int {
	v := int(s.choices.Between(int64(lo), int64(hi)))
	if o, ok := s.override(spec.name); ok {
		if n, err := strconv.Atoi(o); err != nil {
			s.bad(spec.name, o)
		} else if n < min || n > max {
			s.outOfRange(spec, o)
		} else {
			v = n
		}
	}
	s.describe(spec)
	s.set(spec.name, v)
	return v
}

// Duration draws a duration option in [lo, hi]. An override must not be
// negative, must be positive when every drawn value is, and may be at most
// sizeFactor times hi.
func (s *Swarm) Duration(name string, lo, hi time.Duration) time.Duration {
	v := s.choices.Duration(lo, hi)
	min := time.Duration(0)
	if lo > 0 {
		min = 1
	}
	maxD := max(hi*sizeFactor, min)
	spec := drawnSpec{name: name, kind: KindDuration, drawn: durationBounds(lo, hi), accepted: durationBounds(min, maxD)}
	return s.durationOption(spec, v, min, maxD)
}

// Flag draws a boolean option that is true with probability p.
func (s *Swarm) Flag(name string, p float64) bool {
	v := s.choices.Chance(p)
	if o, ok := s.override(name); ok {
		if b, err := strconv.ParseBool(o); err == nil {
			v = b
		} else {
			s.bad(name, o)
		}
	}
	s.describe(drawnSpec{name: name, kind: KindFlag, drawn: flagBounds, accepted: flagBounds})
	s.set(name, v)
	return v
}

// Fixed records an option that was not drawn (set by the scenario or the user).
func (s *Swarm) Fixed(name string, v any) { s.set(name, v) }

// describe records an option's spec the first time it is drawn.
func (s *Swarm) describe(spec drawnSpec) {
	for i := range s.specs {
		if s.specs[i].name == spec.name {
			return
		}
	}
	s.specs = append(s.specs, spec)
}

// Specs returns what each option drawn so far is and accepts, in draw order.
func (s *Swarm) Specs() []OptionSpec {
	out := make([]OptionSpec, len(s.specs))
	for i, spec := range s.specs {
		out[i] = spec.render()
	}
	return out
}

// Entries returns the options as name=value strings in draw order.
func (s *Swarm) Entries() []string {
	out := make([]string, len(s.keys))
	for i, k := range s.keys {
		out[i] = fmt.Sprintf("%s=%v", k, s.values[i])
	}
	return out
}

// String renders the options on one line.
func (s *Swarm) String() string { return strings.Join(s.Entries(), " ") }

// MarshalJSON renders the options as one object, keys in draw order.
func (s *Swarm) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range s.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(s.values[i])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// Outside returns the overridden options whose values lie above the range
// the swarm draws from (name=value (drawn lo..hi)): accepted, but the run
// is larger than any the sweeps cover, and may be slow.
func (s *Swarm) Outside() []string {
	var out []string
	for _, drawn := range s.specs {
		spec := drawn.render()
		o, ok := s.override(spec.Name)
		if ok && spec.AboveDrawn(o) {
			out = append(out, fmt.Sprintf("%s=%s (drawn %s..%s)", spec.Name, o, spec.Low, spec.High))
		}
	}
	return out
}

func roundRate(r float64) float64 {
	return float64(int64(r*10000+0.5)) / 10000
}

// drawnSpec is an option's OptionSpec with its bounds kept as numbers:
// every run draws dozens of options, and only a run asked to describe its
// options (or given overrides) reads their specs, so the text is made when
// render is called rather than on every draw.
type drawnSpec struct {
	name            string
	kind            OptionKind
	drawn, accepted specBounds // Low..High and Min..Max
}

// specBounds is a pair of bounds and how an override writes them, in 24
// bytes (a world keeps one per option drawn): integers and durations as
// themselves, rates as their float64 bits.
type specBounds struct {
	as     boundsKind
	lo, hi uint64
}

// boundsKind says how a specBounds is written.
type boundsKind uint8

const (
	intBoundsKind boundsKind = iota
	rateBoundsKind
	durationBoundsKind
	flagBoundsKind
)

// flagBounds are a flag's bounds, false and true, drawn and accepted.
var flagBounds = specBounds{as: flagBoundsKind}

// rateBounds are the bounds of a probability, lo..hi.
func rateBounds(lo, hi float64) specBounds {
	return specBounds{as: rateBoundsKind, lo: math.Float64bits(lo), hi: math.Float64bits(hi)}
}

// durationBounds are the bounds of a duration, lo..hi.
func durationBounds(lo, hi time.Duration) specBounds {
	return specBounds{as: durationBoundsKind, lo: uint64(lo), hi: uint64(hi)}
}

// intBounds are the bounds of an integer (possibly negative: its bits
// are kept as uint64 and read back as int64), lo..hi.
func intBounds(lo, hi int) specBounds {
	return specBounds{as: intBoundsKind, lo: uint64(int64(lo)), hi: uint64(int64(hi))}
}

// text renders the bounds as an override would write them.
func (b specBounds) text() (lo, hi string) {
	switch b.as {
	case rateBoundsKind:
		return fmtRate(math.Float64frombits(b.lo)), fmtRate(math.Float64frombits(b.hi))
	case durationBoundsKind:
		return time.Duration(b.lo).String(), time.Duration(b.hi).String()
	case flagBoundsKind:
		return "false", "true"
	}
	return strconv.FormatInt(int64(b.lo), 10), strconv.FormatInt(int64(b.hi), 10)
}

// render returns the option's OptionSpec.
func (d drawnSpec) render() OptionSpec {
	spec := OptionSpec{Name: d.name, Kind: d.kind}
	spec.Low, spec.High = d.drawn.text()
	spec.Min, spec.Max = d.accepted.text()
	return spec
}
