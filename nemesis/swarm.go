package nemesis

import (
	"encoding/json"
	"fmt"
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
	err       error
}

// NewSwarm draws options from choices (use a dedicated fork). overrides
// (name -> value, from the user's -opt flags) replace drawn values; the draw
// still happens, so overriding one option never shifts the others.
func NewSwarm(choices *simclock.Choices, overrides map[string]string) *Swarm {
	return &Swarm{choices: choices, overrides: overrides}
}

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
	if o, ok := s.override(name); ok {
		if f, err := strconv.ParseFloat(o, 64); err == nil {
			r = f
		} else {
			s.bad(name, o)
		}
	}
	s.set(name, roundRate(r))
	return r
}

// Err returns the first override that could not be parsed.
func (s *Swarm) Err() error { return s.err }

func (s *Swarm) bad(name, value string) {
	if s.err == nil {
		s.err = fmt.Errorf("option %s: cannot use %q", name, value)
	}
}

// Int draws an integer option in [lo, hi].
func (s *Swarm) Int(name string, lo, hi int) int {
	v := int(s.choices.Between(int64(lo), int64(hi)))
	if o, ok := s.override(name); ok {
		if n, err := strconv.Atoi(o); err == nil {
			v = n
		} else {
			s.bad(name, o)
		}
	}
	s.set(name, v)
	return v
}

// Duration draws a duration option in [lo, hi].
func (s *Swarm) Duration(name string, lo, hi time.Duration) time.Duration {
	v := s.choices.Duration(lo, hi)
	if o, ok := s.override(name); ok {
		if d, err := time.ParseDuration(o); err == nil {
			v = d
		} else {
			s.bad(name, o)
		}
	}
	s.set(name, v.String())
	return v
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
	s.set(name, v)
	return v
}

// Fixed records an option that was not drawn (set by the scenario or the user).
func (s *Swarm) Fixed(name string, v any) { s.set(name, v) }

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

func roundRate(r float64) float64 {
	return float64(int64(r*10000+0.5)) / 10000
}
