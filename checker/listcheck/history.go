package listcheck

import (
	"fmt"
	"strings"

	"shardsim/simclock"
)

// Cmd is one list command as a client sent it: RPUSH, LPUSH (Vals), LPOP,
// RPOP, LRANGE (the whole list), LLEN, LINDEX (Index), LSET (Index,
// Vals[0]), DEL.
type Cmd struct {
	Op    string
	Vals  []string
	Index int64
}

// String renders the command.
func (c Cmd) String() string {
	switch c.Op {
	case "RPUSH", "LPUSH":
		return c.Op + " " + strings.Join(c.Vals, " ")
	case "LINDEX":
		return fmt.Sprintf("LINDEX %d", c.Index)
	case "LSET":
		return fmt.Sprintf("LSET %d %s", c.Index, c.Vals[0])
	}
	return c.Op
}

// writes reports whether the command can change the list.
func (c Cmd) writes() bool {
	switch c.Op {
	case "RPUSH", "LPUSH", "LPOP", "RPOP", "LSET", "DEL":
		return true
	}
	return false
}

// pops reports whether the command is a pop.
func (c Cmd) pops() bool { return c.Op == "LPOP" || c.Op == "RPOP" }

// Answer is a command's answer: a popped or indexed value (Val, OK), a
// length (pushes, LLEN) or DEL's count (N), the items of LRANGE, or
// whether LSET was out of range (Err).
type Answer struct {
	Val   string
	OK    bool
	N     int64
	Items []string
	Err   bool
}

// String renders the answer.
func (a Answer) String() string {
	switch {
	case a.Err:
		return "ERR out of range"
	case a.Items != nil:
		return "[" + strings.Join(a.Items, " ") + "]"
	case a.OK:
		return a.Val
	}
	return fmt.Sprint(a.N)
}

// Outcome is what a client learned of its operation.
type Outcome int

// The outcomes.
const (
	// Done: the operation took effect once and answered.
	Done Outcome = iota
	// Failed: the operation certainly did not take effect.
	Failed
	// Unknown: the answer was lost; it may have taken effect.
	Unknown
)

// Op is one client operation on one list: a command, or the commands of a
// MULTI/EXEC, with the answers the client got.
type Op struct {
	ID      string // unique in the run
	Client  int
	List    string
	Cmds    []Cmd
	Call    simclock.Time
	Return  simclock.Time
	Outcome Outcome
	Answers []Answer // with Done, one per command
}

// String renders the operation.
func (o Op) String() string {
	var cs []string
	for i, c := range o.Cmds {
		s := c.String()
		if o.Outcome == Done && i < len(o.Answers) {
			s += " -> " + o.Answers[i].String()
		}
		cs = append(cs, s)
	}
	out := fmt.Sprintf("%s client%d %q %s", o.ID, o.Client, o.List, strings.Join(cs, "; "))
	switch o.Outcome {
	case Failed:
		out += " (failed)"
	case Unknown:
		out += " (outcome unknown)"
	}
	return out
}

// writes reports whether some command of the operation can change the
// list.
func (o Op) writes() bool {
	for _, c := range o.Cmds {
		if c.writes() {
			return true
		}
	}
	return false
}
