// Package hlc is the hybrid logical clock a group leader issues commit
// timestamps from: physical milliseconds in the high bits, a logical
// counter in the low 16, bounded by a physical ceiling the group agreed on
// through its log.
//
// The ceiling is what makes timestamps monotone across leader changes
// without the new leader knowing what the old one issued or observed: a
// leader only issues or observes timestamps whose physical part is at or
// below the applied ceiling, and a new leader starts above the ceiling.
package hlc

import (
	"errors"
	"strconv"
)

// TS is a hybrid timestamp: physical ms << 16 | logical.
type TS uint64

// LogicalBits is the width of the logical counter.
const LogicalBits = 16

const logicalMask = 1<<LogicalBits - 1

// Make builds a timestamp.
func Make(physMs uint64, logical uint64) TS { return TS(physMs<<LogicalBits | logical&logicalMask) }

// Phys returns the physical part in milliseconds.
func (t TS) Phys() uint64 { return uint64(t) >> LogicalBits }

// Logical returns the logical counter.
func (t TS) Logical() uint64 { return uint64(t) & logicalMask }

// String renders the timestamp as phys.logical.
func (t TS) String() string {
	var b [MaxStringLen]byte
	return string(t.AppendTo(b[:0]))
}

// MaxStringLen bounds the length of a timestamp's text: a 48-bit physical
// part has at most 15 digits, a 16-bit logical one 5.
const MaxStringLen = 15 + 1 + 5

// AppendTo appends the timestamp as String renders it: a trace record can
// take the text from a stack buffer, with no string made (clients trace a
// timestamp or two with every operation).
func (t TS) AppendTo(b []byte) []byte {
	b = strconv.AppendUint(b, t.Phys(), 10)
	b = append(b, '.')
	return strconv.AppendUint(b, t.Logical(), 10)
}

// CeilingTop is the largest timestamp whose physical part is ceiling.
func CeilingTop(ceilingMs uint64) TS { return Make(ceilingMs, logicalMask) }

// ErrCeiling means the clock cannot issue or observe the next timestamp
// without a higher ceiling; the leader must propose one and wait.
var ErrCeiling = errors.New("hlc: physical ceiling reached")

// Clock is a leader's clock. It is leader-local: it is lost with the
// leadership and rebuilt by Start from durable state.
type Clock struct {
	last    TS
	ceiling uint64 // applied ceiling, in ms
}

// Start returns the clock of a new leader whose applied state holds
// lastCommit and ceiling: every timestamp any earlier leader issued or
// observed is at most max(lastCommit, CeilingTop(ceiling)).
func Start(lastCommit TS, ceilingMs uint64) Clock {
	c := Clock{last: CeilingTop(ceilingMs), ceiling: ceilingMs}
	if lastCommit > c.last {
		c.last = lastCommit
	}
	return c
}

// Last returns the highest timestamp issued or observed.
func (c *Clock) Last() TS { return c.last }

// Ceiling returns the applied ceiling.
func (c *Clock) Ceiling() uint64 { return c.ceiling }

// SetCeiling records a newly applied ceiling (ceilings only rise).
func (c *Clock) SetCeiling(ms uint64) {
	if ms > c.ceiling {
		c.ceiling = ms
	}
}

// Peek returns the timestamp Next would issue at local time nowMs, without
// issuing it.
func (c *Clock) Peek(nowMs uint64) TS {
	phys := nowMs
	if p := c.last.Phys(); p > phys {
		phys = p
	}
	if phys == c.last.Phys() {
		if c.last.Logical() < logicalMask {
			return c.last + 1
		}
		phys++
	}
	return Make(phys, 0)
}

// Next issues a timestamp above every one issued or observed, at local
// physical time nowMs. It fails with ErrCeiling when that timestamp's
// physical part would exceed the ceiling.
func (c *Clock) Next(nowMs uint64) (TS, error) {
	t := c.Peek(nowMs)
	if t.Phys() > c.ceiling {
		if c.last < CeilingTop(c.ceiling) {
			// The clock is ahead of the ceiling: stay on the ceiling and
			// count logically.
			t = c.last + 1
			if t.Phys() < c.ceiling {
				t = Make(c.ceiling, 0)
			}
		} else {
			return 0, ErrCeiling
		}
	}
	c.last = t
	return t, nil
}

// Observe moves the clock to at least t (a timestamp read or imported). It
// fails with ErrCeiling, and changes nothing, if t lies above the ceiling.
func (c *Clock) Observe(t TS) error {
	if t.Phys() > c.ceiling {
		return ErrCeiling
	}
	if t > c.last {
		c.last = t
	}
	return nil
}

// ObserveDurable moves the clock to at least t, which the group's log has
// already made durable (an import batch, a cutover floor): the applied
// ceiling was raised with it.
func (c *Clock) ObserveDurable(t TS) {
	if p := t.Phys(); p > c.ceiling {
		c.ceiling = p
	}
	if t > c.last {
		c.last = t
	}
}
