package kvcheck

import (
	"math"

	"github.com/anishathalye/porcupine"

	"shardsim/property"
	"shardsim/simclock"
	"shardsim/simkv"
)

// WatchLog is what one client saw watching the whole workload keyspace from
// the first revision: every watch response, with the time it arrived. It
// serves two purposes. It is checked for the KV.Watch* properties, and it
// tells which ambiguous writes took effect (the etcd robustness tests do the
// same): every put in the workload writes a unique value, so a put or txn
// whose value never appears in the stream never happened, and one whose value
// appears had happened by the time the watcher saw it.
type WatchLog struct {
	Start     int64 // the watch's start revision
	Responses []ObservedWatch
	Broken    error // set if the stream ended early; the log is then incomplete
}

// ObservedWatch is one watch response and when the watcher received it.
type ObservedWatch struct {
	At   simclock.Time
	Resp simkv.WatchResponse
}

// Add records a response received at time at.
func (l *WatchLog) Add(at simclock.Time, resp simkv.WatchResponse) {
	l.Responses = append(l.Responses, ObservedWatch{At: at, Resp: resp})
}

// CheckWatch checks KV.WatchOrdered, KV.WatchUnique, KV.WatchAtomic and
// KV.WatchReliable on a complete log of a watch over a keyspace that every
// write of the run touched, ending with the store at revision final. It
// returns the violation, or nil.
func CheckWatch(l *WatchLog, final int64) *property.Violation {
	if l.Broken != nil {
		return nil // an incomplete log proves nothing either way
	}
	last := int64(0)
	seen := map[int64]bool{}
	type keyRev struct {
		key string
		rev int64
	}
	events := map[keyRev]bool{}
	for i, o := range l.Responses {
		r := o.Resp
		if r.Canceled {
			return property.Violated(property.KVWatchReliable, "response %d: watch canceled (%s)", i, r.CancelReason)
		}
		var respRevs []int64
		for j, e := range r.Events {
			rev := e.Kv.ModRevision
			if rev < last {
				return property.Violated(property.KVWatchOrdered, "response %d: event at revision %d after revision %d", i, rev, last)
			}
			kr := keyRev{string(e.Kv.Key), rev}
			if events[kr] {
				return property.Violated(property.KVWatchUnique, "event for key %q at revision %d delivered twice", e.Kv.Key, rev)
			}
			events[kr] = true
			if j == 0 && rev == last || rev != last && seen[rev] {
				return property.Violated(property.KVWatchAtomic, "revision %d's events arrived split across responses", rev)
			}
			if rev != last {
				respRevs = append(respRevs, rev)
			}
			last = rev
		}
		for _, rev := range respRevs {
			seen[rev] = true
		}
	}
	for rev := l.Start; rev <= final; rev++ {
		if rev > 1 && !seen[rev] {
			return property.Violated(property.KVWatchReliable, "revision %d never arrived (store at %d)", rev, final)
		}
	}
	return nil
}

// PatchWithWatch resolves ambiguous puts and txns using a complete watch
// log: one whose unique value the watch never showed is dropped (it never
// happened); one whose value it showed gets the arrival time as its return
// time (it had happened by then). Other ambiguous writes stay open-ended.
// Patching only ever removes possible linearizations, so it can turn a pass
// into a violation but never hide one.
func PatchWithWatch(history []porcupine.Operation, l *WatchLog) []porcupine.Operation {
	if l == nil || l.Broken != nil {
		return history
	}
	seenAt := map[string]simclock.Time{}
	for _, o := range l.Responses {
		for _, e := range o.Resp.Events {
			if e.Type == simkv.EventPut {
				if _, ok := seenAt[string(e.Kv.Value)]; !ok {
					seenAt[string(e.Kv.Value)] = o.At
				}
			}
		}
	}
	out := make([]porcupine.Operation, 0, len(history))
	for _, op := range history {
		if !op.Output.(Output).Failed || op.Return != math.MaxInt64 {
			out = append(out, op)
			continue
		}
		value, ok := uniqueValue(op.Input.(Input).Req)
		if !ok {
			out = append(out, op)
			continue
		}
		at, applied := seenAt[string(value)]
		if !applied {
			continue
		}
		op.Return = int64(at)
		out = append(out, op)
	}
	return out
}

// uniqueValue returns the value a put, or the put of a txn's success branch,
// writes. A txn whose compare failed writes nothing; an unseen txn value is
// then equally explained by "never applied", so dropping it is sound.
func uniqueValue(r simkv.Request) ([]byte, bool) {
	switch {
	case r.Put != nil && !r.Put.IgnoreValue:
		return r.Put.Value, true
	case r.Txn != nil:
		var v []byte
		for _, branch := range [][]simkv.RequestOp{r.Txn.Success, r.Txn.Failure} {
			for _, op := range branch {
				switch {
				case op.Put != nil && v == nil:
					v = op.Put.Value
				case op.Put != nil, op.DeleteRange != nil, op.Txn != nil:
					return nil, false // more than one write: not identifiable by one value
				}
			}
		}
		return v, v != nil
	}
	return nil, false
}
