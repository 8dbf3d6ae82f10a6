package keymovecheck

import (
	"fmt"
	"math"
	"shardsim/property"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"

	"shardsim/checker"
	"shardsim/simclock"
)

// Op is one client operation on one key, as the client saw it.
type Op struct {
	Client    int
	Key       string
	Call      simclock.Time
	Return    simclock.Time // ignored for ambiguous writes
	Write     bool
	Value     string // the value written, or the value a read returned
	Found     bool   // a read found the key
	Ambiguous bool   // a write whose outcome the client could not learn
}

// regInput and regOutput are the porcupine payloads of the per-key
// register model.
type regInput struct {
	write bool
	value string
}

type regOutput struct {
	found bool
	value string
}

type regState struct {
	has   bool
	value string
}

// keyModel is one key as a register: a write replaces its value, a read
// returns it (or finds nothing before the first write).
var keyModel = porcupine.Model{
	Init: func() any { return regState{} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(regState), input.(regInput), output.(regOutput)
		if in.write {
			return true, regState{has: true, value: in.value}
		}
		return out.found == s.has && (!s.has || out.value == s.value), s
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(regInput), output.(regOutput)
		if in.write {
			return "write " + in.value
		}
		if !out.found {
			return "read -> none"
		}
		return "read -> " + out.value
	},
}

// CheckLinearizable checks, per key, that the client operations linearize
// against a register. A key's bootstrap value is a write before everything;
// an ambiguous write the shards applied takes effect by the time they
// applied it, one they never applied is dropped (the oracle sees every
// apply). Keys swapped under force are skipped.
func (d *Durable) CheckLinearizable(ops []Op, timeout time.Duration) (property.Verdict, *property.Violation) {
	byKey := map[string][]porcupine.Operation{}
	for k := range d.owner {
		if v, ok := d.initial[k]; ok {
			byKey[k] = append(byKey[k], porcupine.Operation{ClientId: -1, Call: math.MinInt64 / 2, Return: math.MinInt64/2 + 1,
				Input: regInput{write: true, value: v}, Output: regOutput{}})
		}
	}
	for _, o := range ops {
		if d.forcedDone(d.cfg.Plan.Index(o.Key)) {
			continue
		}
		op := porcupine.Operation{ClientId: o.Client, Call: int64(o.Call), Return: int64(o.Return)}
		if o.Write {
			op.Input, op.Output = regInput{write: true, value: o.Value}, regOutput{}
			if o.Ambiguous {
				at, ok := d.appliedAt(o.Key, o.Value)
				if !ok {
					continue
				}
				op.Return = max(int64(at), op.Call)
			}
		} else {
			op.Input, op.Output = regInput{}, regOutput{found: o.Found, value: o.Value}
		}
		byKey[o.Key] = append(byKey[o.Key], op)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	spent := time.Duration(0)
	for _, k := range keys {
		if timeout-spent <= 0 {
			return property.VerdictUnknown, property.Violated(property.KMLinearizable, "porcupine ran out of time before key %q", k)
		}
		start := time.Now() // wall time bounds the checker only; it never feeds the world
		verdict := checker.CheckWithin(keyModel, byKey[k], timeout-spent)
		spent += time.Since(start)
		switch verdict {
		case property.VerdictViolation:
			return property.VerdictViolation, violation(property.KMLinearizable, k, "the %d client operations on key %q have no linearization", len(byKey[k]), k)
		case property.VerdictUnknown:
			return property.VerdictUnknown, property.Violated(property.KMLinearizable, "porcupine ran out of time on key %q", k)
		}
	}
	return property.VerdictOK, nil
}

// appliedAt finds when a shard applied the client write of value to key.
func (d *Durable) appliedAt(key, value string) (simclock.Time, bool) {
	for _, w := range d.writes[key] {
		if w.Value == value {
			return w.At, true
		}
	}
	return 0, false
}

// String renders an op for reports.
func (o Op) String() string {
	if o.Write {
		return fmt.Sprintf("c%d write %s=%s [%v,%v] ambiguous=%v", o.Client, o.Key, o.Value, o.Call, o.Return, o.Ambiguous)
	}
	return fmt.Sprintf("c%d read %s -> %s found=%v [%v,%v]", o.Client, o.Key, o.Value, o.Found, o.Call, o.Return)
}
