package nemesis

import (
	"fmt"
	"strconv"
	"time"
)

// OptionKind says how a swarm option is drawn and what an override of it
// must look like.
type OptionKind string

// The kinds of swarm option.
const (
	KindInt      OptionKind = "int"      // a size or count: Swarm.Int
	KindEnum     OptionKind = "enum"     // a mode or an index: Swarm.Enum
	KindRate     OptionKind = "rate"     // a probability: Swarm.Rate
	KindDuration OptionKind = "duration" // Swarm.Duration
	KindFlag     OptionKind = "flag"     // a boolean: Swarm.Flag
)

// OptionSpec describes one swarm option: the range a run draws it from
// (Low..High) and the values an -opt override may give it (Min..Max), all as
// the text an override would use.
type OptionSpec struct {
	Name      string     `json:"name"`
	Kind      OptionKind `json:"kind"`
	Low       string     `json:"drawn_low"`
	High      string     `json:"drawn_high"`
	Min       string     `json:"min"`
	Max       string     `json:"max"`
	Sometimes bool       `json:"sometimes,omitempty"` // drawn only in some runs (it depends on another option)
}

// Accepts says in words which override values the option takes.
func (o OptionSpec) Accepts() string {
	switch o.Kind {
	case KindFlag:
		return "true or false"
	case KindRate:
		return "a probability between 0 and 1"
	}
	return fmt.Sprintf("between %s and %s", o.Min, o.Max)
}

// AboveDrawn reports whether v is a value the option accepts that lies
// above the drawn range: a run larger than any sweep covers. (A mode or a
// flag never is.)
func (o OptionSpec) AboveDrawn(v string) bool {
	switch o.Kind {
	case KindInt:
		n, err := strconv.Atoi(v)
		hi, _ := strconv.Atoi(o.High)
		max, _ := strconv.Atoi(o.Max)
		return err == nil && n > hi && n <= max
	case KindDuration:
		d, err := time.ParseDuration(v)
		hi, _ := time.ParseDuration(o.High)
		max, _ := time.ParseDuration(o.Max)
		return err == nil && d > hi && d <= max
	case KindRate:
		f, err := strconv.ParseFloat(v, 64)
		hi, _ := strconv.ParseFloat(o.High, 64)
		return err == nil && f > hi && f <= 1
	}
	return false
}

func fmtRate(r float64) string { return strconv.FormatFloat(roundRate(r), 'f', -1, 64) }
