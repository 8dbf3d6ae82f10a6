package listcheck

import (
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"shardsim/checker"
	"shardsim/property"
	"shardsim/simclock"
)

// dInput and dOutput are the porcupine payloads of one list operation.
type dInput struct {
	cmds    []Cmd
	unknown bool // its answer was lost: any answer goes
}

type dOutput struct{ answers []Answer }

// step runs cmds on deque l (never changed in place) and returns the new
// deque and the answers a Redis list gives.
func step(l []string, cmds []Cmd) ([]string, []Answer) {
	out := make([]Answer, len(cmds))
	for i, c := range cmds {
		a := &out[i]
		switch c.Op {
		case "RPUSH":
			l = append(slices.Clip(l), c.Vals...)
			a.N = int64(len(l))
		case "LPUSH":
			n := make([]string, 0, len(l)+len(c.Vals))
			for j := len(c.Vals) - 1; j >= 0; j-- {
				n = append(n, c.Vals[j])
			}
			l = append(n, l...)
			a.N = int64(len(l))
		case "LPOP":
			if len(l) > 0 {
				a.Val, a.OK, l = l[0], true, l[1:]
			}
		case "RPOP":
			if len(l) > 0 {
				a.Val, a.OK, l = l[len(l)-1], true, l[:len(l)-1:len(l)-1]
			}
		case "LRANGE":
			a.Items = append([]string{}, l...)
		case "LLEN":
			a.N = int64(len(l))
		case "LINDEX", "LSET":
			i := c.Index
			if i < 0 {
				i += int64(len(l))
			}
			in := i >= 0 && i < int64(len(l))
			switch {
			case c.Op == "LINDEX" && in:
				a.Val, a.OK = l[i], true
			case c.Op == "LSET" && in:
				l = slices.Clone(l)
				l[i] = c.Vals[0]
			case c.Op == "LSET":
				a.Err = true
			}
		case "DEL":
			if len(l) > 0 {
				a.N = 1
			}
			l = nil
		}
	}
	return l, out
}

func sameAnswers(a, b []Answer) bool {
	return slices.EqualFunc(a, b, func(x, y Answer) bool {
		return x.Val == y.Val && x.OK == y.OK && x.N == y.N && x.Err == y.Err && slices.Equal(x.Items, y.Items)
	})
}

// DequeModel is the sequential specification of one Redis list: a deque
// of values; a MULTI/EXEC runs its commands at one point. An operation
// whose answer was lost takes any answer.
var DequeModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		var ks []string
		for _, op := range h {
			k := op.Metadata.(string)
			if _, ok := by[k]; !ok {
				ks = append(ks, k)
			}
			by[k] = append(by[k], op)
		}
		sort.Strings(ks)
		out := make([][]porcupine.Operation, 0, len(ks))
		for _, k := range ks {
			out = append(out, by[k])
		}
		return out
	},
	Init: func() any { return []string(nil) },
	Step: func(state, input, output any) (bool, any) {
		in := input.(dInput)
		l, ans := step(state.([]string), in.cmds)
		return in.unknown || sameAnswers(ans, output.(dOutput).answers), l
	},
	Equal: func(a, b any) bool { return slices.Equal(a.([]string), b.([]string)) },
	Hash: func(s any) uint64 {
		h := fnv.New64a()
		for _, v := range s.([]string) {
			h.Write([]byte(v))
			h.Write([]byte{0})
		}
		return h.Sum64()
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(dInput), output.(dOutput)
		var parts []string
		for i, c := range in.cmds {
			s := c.String()
			if !in.unknown && i < len(out.answers) {
				s += " -> " + out.answers[i].String()
			}
			parts = append(parts, s)
		}
		if in.unknown {
			parts = append(parts, "(answer lost)")
		}
		return strings.Join(parts, "; ")
	},
	DescribeState: func(s any) string { return "[" + strings.Join(s.([]string), " ") + "]" },
}

// Operations is the history L.Linearizable judges, as porcupine operations
// (partitioned by list): every operation that answered, and every one
// whose answer was lost but whose transaction committed by the truth (it
// took effect by its first commit; one that never committed never
// happened). Failed operations never took effect.
func Operations(ops []Op, t *Truth) []porcupine.Operation {
	var out []porcupine.Operation
	for _, o := range ops {
		op := porcupine.Operation{ClientId: o.Client, Call: int64(o.Call), Return: int64(o.Return), Metadata: o.List,
			Input: dInput{cmds: o.Cmds}, Output: dOutput{answers: o.Answers}}
		switch o.Outcome {
		case Failed:
			continue
		case Unknown:
			at, ok := t.CommittedAt(o.ID)
			if !ok || !o.writes() {
				continue
			}
			op.Input = dInput{cmds: o.Cmds, unknown: true}
			op.Return = int64(max(at, o.Call))
		}
		out = append(out, op)
	}
	return out
}

// CheckLinearizable judges L.Linearizable per list with porcupine, within
// timeout (wall time; porcupine's goroutines never touch the world). It
// also returns the size of the longest list history it checked.
func CheckLinearizable(ops []Op, t *Truth, timeout time.Duration) (property.Verdict, *property.Violation, int) {
	parts := DequeModel.Partition(Operations(ops, t))
	single := DequeModel
	single.Partition = nil
	longest := 0
	start := time.Now()
	for _, part := range parts {
		longest = max(longest, len(part))
		left := timeout - time.Since(start)
		if left <= 0 {
			return property.VerdictUnknown, property.Violated(property.LLinearizable, "porcupine ran out of time"), longest
		}
		res, info := porcupine.CheckOperationsVerbose(single, part, left)
		switch checker.Verdict(res) {
		case property.VerdictViolation:
			v := &property.Violation{Property: property.LLinearizable, Subject: listSubject(part[0].Metadata.(string)),
				Detail: fmt.Sprintf("the %d operations on list %q have no linearization%s", len(part), part[0].Metadata, stuck(info, part))}
			return property.VerdictViolation, v, longest
		case property.VerdictUnknown:
			return property.VerdictUnknown, property.Violated(property.LLinearizable, "porcupine ran out of time on list %q (%d operations)", part[0].Metadata, len(part)), longest
		}
	}
	return property.VerdictOK, nil, longest
}

// stuck names the operation no linearization could place, from
// porcupine's longest partial linearization (the canonical one: porcupine
// hands equally long ones over in map order, and the detail goes into the
// trace).
func stuck(info porcupine.LinearizationInfo, part []porcupine.Operation) string {
	partials := info.PartialLinearizations()
	if len(partials) == 0 || len(partials[0]) == 0 {
		return ""
	}
	best := checker.CanonicalLongest(partials[0])
	placed := map[int]bool{}
	l := []string(nil)
	for _, i := range best {
		placed[i] = true
		l, _ = step(l, part[i].Input.(dInput).cmds)
	}
	first := -1
	for i, op := range part {
		if !placed[i] && (first < 0 || op.Call < part[first].Call) {
			first = i
		}
	}
	if first < 0 {
		return ""
	}
	op := part[first]
	return fmt.Sprintf("; after %d operations the list is %v, and client%d's %s (called at %s) fits nowhere",
		len(best), l, op.ClientId, DequeModel.DescribeOperation(op.Input, op.Output), simclock.Time(op.Call))
}
