package coordcheck

import (
	"reflect"
	"slices"

	"shardsim/model/coord"
	"shardsim/property"
	"shardsim/simclock"
)

// Replays judges the first half of C.Idempotency, which the effect log
// (no second effect) and the durable rules (no op-log entry rewritten)
// leave open: a retry, with the same op id and payload, of an operation
// that took effect returns the first result as a replay, even after the
// lease expired, another worker took over or the shard became terminal.
//
// Whether an operation took effect is read from the durable records, not
// from its answer (which may have been lost): the first durable state in
// which the shard's op-log holds the op id with a non-error result. A
// retry invoked after that state, refused while the entry is still held,
// should have replayed; a replay must return what the first answered
// execution returned (split_replace's children, split_residual's
// residual).
//
// What it cannot see: a retry of an operation whose entry the op-log has
// since evicted (the protocol then treats it as new, by design); and
// payloads are compared as the requests carried them, so two requests
// that differ only in fields the protocol ignores count as different.
type Replays struct {
	landed map[effectOp]uint64 // when each op id's entry first became durable
	first  map[effectOp]*Request
	err    *property.Violation
}

// NewReplays returns an empty judge.
func NewReplays() *Replays {
	return &Replays{landed: map[effectOp]uint64{}, first: map[effectOp]*Request{}}
}

// Err returns the first violation, or nil.
func (r *Replays) Err() *property.Violation { return r.err }

// ObserveDurable notes new op-log entries; register it with
// Durable.OnChange. Each change appends at most one entry per shard, so
// only the newest is looked at.
func (r *Replays) ObserveDurable(_, next *coord.Snapshot, _ simclock.Time, seq uint64) {
	for i := range next.Shards {
		r.observeShard(&next.Shards[i], seq)
	}
}

// ObserveShards is ObserveDurable on the shard records a change touched;
// register it with Durable.OnShardsChange instead. It learns exactly what
// ObserveDurable would: an untouched record's newest entry was looked at
// when the record took its present value, and looking again can add
// nothing (landed only gains op ids it lacks, and a refused entry stays
// refused).
func (r *Replays) ObserveShards(changed []ShardChange, seq uint64) {
	for _, c := range changed {
		if c.Next != nil {
			r.observeShard(c.Next, seq)
		}
	}
}

func (r *Replays) observeShard(s *coord.ShardRecord, seq uint64) {
	if n := s.OpLog.Len(); n > 0 {
		e := s.OpLog.At(n - 1)
		k := effectOp{ShardRef{s.Tenant, s.Key()}, e.Op}
		if _, ok := r.landed[k]; !ok && e.Result != coord.OpError {
			r.landed[k] = seq
		}
	}
}

// replayable reports whether kind is a lease-gated op with an op id.
func replayable(k RequestKind) bool { return k.Gated() && k != ReqRenew }

// samePayload reports whether b repeats a's operation exactly.
func samePayload(a, b *Request) bool {
	return a.Kind == b.Kind && reflect.DeepEqual(a.Cursor, b.Cursor) && a.Reason == b.Reason &&
		reflect.DeepEqual(a.Replace, b.Replace) && reflect.DeepEqual(a.Residual, b.Residual)
}

// held reports whether s's record of shard holds op with a non-error result.
func held(s *coord.Snapshot, shard ShardRef, op coord.OpID) bool {
	for i := range s.Shards {
		if r := &s.Shards[i]; r.Tenant == shard.Tenant && r.Key() == shard.Key {
			e, ok := r.OpLog.Find(op)
			return ok && e.Result != coord.OpError
		}
	}
	return false
}

// Answer judges an answered request against the durable state s at the
// time of its answer.
func (r *Replays) Answer(o *Request, s *coord.Snapshot) {
	if r.err != nil || !replayable(o.Kind) || o.Op == 0 {
		return
	}
	t, key, _ := o.Target()
	k := effectOp{ShardRef{t, key}, o.Op}
	first, seen := r.first[k]
	if !seen {
		r.first[k] = o
		return
	}
	if !o.Out.Done || o.Out.Ambiguous {
		return
	}
	if !samePayload(first, o) || o.Tenant != first.Tenant {
		return // a conflict or a foreign scope: other rules judge it
	}
	at, landed := r.landed[k]
	switch {
	case o.Out.Code != 0 && landed && at < o.CallSeq && held(s, k.shard, o.Op):
		r.fail(o, "the retry of %s, which had taken effect, was refused (%s) instead of replayed", o.Op, o.Out.Code)
	case o.Out.Code == 0 && first.Out.Code == 0 && !first.Out.Ambiguous && first.Out.Done:
		if !slices.Equal(first.Out.Children, o.Out.Children) || first.Out.Residual != o.Out.Residual {
			r.fail(o, "the retry of %s answered children %v residual %s, the first execution %v %s",
				o.Op, o.Out.Children, o.Out.Residual, first.Out.Children, first.Out.Residual)
		}
	}
	if first.Out.Ambiguous || first.Out.Code != 0 && o.Out.Code == 0 {
		r.first[k] = o // learn the result from the first definite success
	}
}

func (r *Replays) fail(o *Request, format string, args ...any) {
	if r.err == nil {
		t, k, _ := o.Target()
		r.err = property.Violated(property.CIdempotency, "%s: "+format+" (by %s)",
			append(append([]any{shardName(t, k)}, args...), o.String())...).About(property.SubjectShard, shardSubject(k))
	}
}
