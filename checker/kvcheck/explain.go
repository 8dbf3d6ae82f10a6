package kvcheck

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"shardsim/checker"
	"shardsim/property"
	"shardsim/simclock"
	"shardsim/simkv"
)

// explainShown is how many linearized operations on the stuck key a
// report lists before the one that could not be placed.
const explainShown = 6

// explain turns a history porcupine found illegal into a violation that
// names the key and the operations involved. It asks porcupine for its
// partial linearizations: the longest one is as far as any order of the
// history gets. The operation that stops it is the one outside that prefix
// whose answer came first: it had to take effect before it returned, and no
// place after the prefix fits its answer. The report names that
// operation's key, what the model holds for the key after the prefix, and
// the prefix's last operations on the key. If the verbose check cannot
// finish in timeout it falls back to counting the operations.
func explain(history []porcupine.Operation, timeout time.Duration) *property.Violation {
	plain := property.Violated(property.KVLinearizable, "the history of %d client operations has no linearization against etcd's KV semantics", len(history))
	res, info := porcupine.CheckOperationsVerbose(Model, history, timeout)
	if res != porcupine.Illegal {
		return plain
	}
	parts := info.PartialLinearizations()
	if len(parts) != 1 || len(parts[0]) == 0 {
		return plain
	}
	longest := checker.CanonicalLongest(parts[0])
	stuck := stuckOp(history, longest)
	if stuck < 0 {
		return plain
	}
	op := history[stuck]
	key := primaryKey(op.Input.(Input).Req)
	if key == nil { // a lease call: no key to name
		return property.Violated(property.KVLinearizable, "%s cannot be linearized after the longest linearizable prefix (%d of %d operations)",
			describeOp(op), len(longest), len(history))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "key %q: %s cannot be linearized after the longest linearizable prefix (%d of %d operations)",
		key, describeOp(op), len(longest), len(history))
	if state := modelValue(history, longest, key); state != "" {
		fmt.Fprintf(&b, "; after that prefix the model holds %s", state)
	}
	onKey := lastOnKey(history, longest, key, explainShown)
	if len(onKey) > 0 {
		fmt.Fprintf(&b, "\nthe prefix's last %d operations on %q, in linearization order:", len(onKey), key)
		for _, i := range onKey {
			fmt.Fprintf(&b, "\n  %s", describeOp(history[i]))
		}
	}
	return (&property.Violation{Property: property.KVLinearizable, Detail: b.String()}).About(property.SubjectKey, string(key))
}

// stuckOp returns the index of the operation outside the linearized set
// with the earliest return (a completed one if there is any), or -1.
func stuckOp(history []porcupine.Operation, linearized []int) int {
	in := make([]bool, len(history))
	for _, i := range linearized {
		in[i] = true
	}
	best := -1
	for i, op := range history {
		if in[i] {
			continue
		}
		if best < 0 || op.Return < history[best].Return || op.Return == history[best].Return && op.Call < history[best].Call {
			best = i
		}
	}
	return best
}

// primaryKey is the key a request is about: its key, or for a transaction
// the first key it compares or touches.
func primaryKey(r simkv.Request) []byte {
	switch {
	case r.Range != nil:
		return r.Range.Key
	case r.Put != nil:
		return r.Put.Key
	case r.DeleteRange != nil:
		return r.DeleteRange.Key
	case r.Txn != nil:
		for _, c := range r.Txn.Compare {
			return c.Key
		}
		for _, ops := range [][]simkv.RequestOp{r.Txn.Success, r.Txn.Failure} {
			for _, o := range ops {
				if k := primaryKey(simkv.Request{Range: o.Range, Put: o.Put, DeleteRange: o.DeleteRange, Txn: o.Txn}); k != nil {
					return k
				}
			}
		}
	}
	return nil
}

// touches reports whether a request reads or writes key (a range covering
// it included).
func touches(r simkv.Request, key []byte) bool {
	inRange := func(k, end []byte) bool {
		if len(end) == 0 {
			return string(k) == string(key)
		}
		return string(key) >= string(k) && string(key) < string(end)
	}
	switch {
	case r.Range != nil:
		return inRange(r.Range.Key, r.Range.RangeEnd)
	case r.Put != nil:
		return string(r.Put.Key) == string(key)
	case r.DeleteRange != nil:
		return inRange(r.DeleteRange.Key, r.DeleteRange.RangeEnd)
	case r.Txn != nil:
		for _, c := range r.Txn.Compare {
			if inRange(c.Key, c.RangeEnd) {
				return true
			}
		}
		for _, ops := range [][]simkv.RequestOp{r.Txn.Success, r.Txn.Failure} {
			for _, o := range ops {
				if touches(simkv.Request{Range: o.Range, Put: o.Put, DeleteRange: o.DeleteRange, Txn: o.Txn}, key) {
					return true
				}
			}
		}
	}
	return false
}

// lastOnKey returns the last n linearized operations that touch key.
func lastOnKey(history []porcupine.Operation, linearized []int, key []byte, n int) []int {
	var out []int
	for _, i := range linearized {
		if touches(history[i].Input.(Input).Req, key) {
			out = append(out, i)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// modelValue replays the linearized prefix through the model and reads key.
func modelValue(history []porcupine.Operation, linearized []int, key []byte) string {
	state := Model.Init().(*kvState)
	for _, i := range linearized {
		ok, next := kvStep(state, history[i].Input.(Input), history[i].Output.(Output))
		if !ok {
			return ""
		}
		state = next.(*kvState)
	}
	resp, err := state.store.Clone().Apply(0, simkv.Request{Range: &simkv.RangeRequest{Key: key}})
	if err != nil || resp.Range == nil {
		return ""
	}
	if len(resp.Range.Kvs) == 0 {
		return fmt.Sprintf("no %q (revision %d)", key, resp.Header().Revision)
	}
	kv := resp.Range.Kvs[0]
	return fmt.Sprintf("%q=%q (mod revision %d, revision %d)", key, kv.Value, kv.ModRevision, resp.Header().Revision)
}

// describeOp renders one history operation: its client, the request and
// answer, and the virtual times it was invoked and returned.
func describeOp(op porcupine.Operation) string {
	client := fmt.Sprintf("client#%d", op.ClientId)
	if name, ok := op.Metadata.(string); ok && name != "" {
		client = name
	}
	ret := "open"
	if op.Return != math.MaxInt64 {
		ret = simclock.Time(op.Return).String()
	}
	return fmt.Sprintf("%s %s [%s, %s]", client, Model.DescribeOperation(op.Input, op.Output), simclock.Time(op.Call), ret)
}
