package kvcheck

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"shardsim/property"
	"shardsim/simclock"
	"shardsim/simkv"
)

// hist builds histories by hand: each helper appends one operation.
type hist struct{ ops []porcupine.Operation }

func (h *hist) op(client int, call, ret int64, req simkv.Request, out Output) *hist {
	h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: Input{Req: req}, Call: call, Output: out, Return: ret})
	return h
}

func put(k, v string) simkv.Request {
	return simkv.Request{Put: &simkv.PutRequest{Key: []byte(k), Value: []byte(v)}}
}

func get(k string) simkv.Request { return simkv.Request{Range: &simkv.RangeRequest{Key: []byte(k)}} }

func putOK(rev int64) Output {
	return Output{Resp: simkv.Response{Put: &simkv.PutResponse{Header: simkv.ResponseHeader{Revision: rev}}}}
}

func got(rev int64, kvs ...simkv.KeyValue) Output {
	return Output{Resp: simkv.Response{Range: &simkv.RangeResponse{Header: simkv.ResponseHeader{Revision: rev}, Kvs: kvs, Count: int64(len(kvs))}}}
}

func kv(k, v string, create, mod, version int64) simkv.KeyValue {
	return simkv.KeyValue{Key: []byte(k), Value: []byte(v), CreateRevision: create, ModRevision: mod, Version: version}
}

var failed = Output{Failed: true, Err: simkv.ErrDeadlineExceeded}

func check(t *testing.T, h *hist) property.Verdict {
	t.Helper()
	v, _ := Check(h.ops, 5*time.Second)
	return v
}

func TestModelAcceptsSequentialHistory(t *testing.T) {
	h := (&hist{}).
		op(0, 0, 10, put("a", "1"), putOK(2)).
		op(1, 20, 30, get("a"), got(2, kv("a", "1", 2, 2, 1))).
		op(0, 40, 50, put("a", "2"), putOK(3)).
		op(1, 60, 70, get("a"), got(3, kv("a", "2", 2, 3, 2)))
	if v := check(t, h); v != property.VerdictOK {
		t.Fatalf("verdict %s, want ok", v)
	}
}

func TestModelRejectsStaleRead(t *testing.T) {
	h := (&hist{}).
		op(0, 0, 10, put("a", "1"), putOK(2)).
		op(0, 20, 30, put("a", "2"), putOK(3)).
		op(1, 40, 50, get("a"), got(3, kv("a", "1", 2, 2, 1)))
	if v := check(t, h); v != property.VerdictViolation {
		t.Fatalf("verdict %s, want violation", v)
	}
}

func TestModelRejectsWrongMetadata(t *testing.T) {
	// The value is right but the version is not: every field counts.
	h := (&hist{}).
		op(0, 0, 10, put("a", "1"), putOK(2)).
		op(1, 20, 30, get("a"), got(2, kv("a", "1", 2, 2, 7)))
	if v := check(t, h); v != property.VerdictViolation {
		t.Fatalf("verdict %s, want violation", v)
	}
}

// A failed write may have been applied or not: both stories must pass.
func TestModelTreatsFailedWritesAsMaybeApplied(t *testing.T) {
	applied := (&hist{}).
		op(0, 0, math.MaxInt64, put("a", "1"), failed).
		op(1, 20, 30, get("a"), got(2, kv("a", "1", 2, 2, 1)))
	if v := check(t, applied); v != property.VerdictOK {
		t.Fatalf("failed write seen later: verdict %s, want ok", v)
	}
	notApplied := (&hist{}).
		op(0, 0, math.MaxInt64, put("a", "1"), failed).
		op(1, 20, 30, get("a"), got(1))
	if v := check(t, notApplied); v != property.VerdictOK {
		t.Fatalf("failed write never seen: verdict %s, want ok", v)
	}
	// But a failed write cannot take effect before it was sent.
	early := (&hist{}).
		op(1, 0, 10, get("a"), got(2, kv("a", "1", 2, 2, 1))).
		op(0, 20, math.MaxInt64, put("a", "1"), failed)
	if v := check(t, early); v != property.VerdictViolation {
		t.Fatalf("write seen before it was sent: verdict %s, want violation", v)
	}
}

func TestModelTimeoutIsUnknownNotPass(t *testing.T) {
	// Many concurrent ambiguous writes to distinct keys and reads that pin
	// none of them make the search space explode.
	h := &hist{}
	for i := 0; i < 40; i++ {
		h.op(i, int64(i), math.MaxInt64, put(fmt.Sprintf("k%02d", i), "v"), failed)
	}
	for i := 0; i < 40; i++ {
		h.op(100+i, 1000+int64(i), 1000+int64(i)+500, get("zz"), got(int64(2+i)))
	}
	v, _ := Check(h.ops, 50*time.Millisecond)
	if v != property.VerdictUnknown {
		t.Fatalf("verdict %s: a check that cannot finish must report unknown, not a pass or a violation", v)
	}
}

func TestRevisionMonotoneCatchesBadSteps(t *testing.T) {
	p := put("a", "1")
	okResp := simkv.Response{Put: &simkv.PutResponse{Header: simkv.ResponseHeader{Revision: 2}}}
	cases := []struct {
		name          string
		before, after int64
		resp          simkv.Response
		err           error
	}{
		{"backwards", 1, 0, okResp, nil},
		{"jump by two", 1, 3, simkv.Response{Put: &simkv.PutResponse{Header: simkv.ResponseHeader{Revision: 3}}}, nil},
		{"put without bump", 1, 1, simkv.Response{Put: &simkv.PutResponse{Header: simkv.ResponseHeader{Revision: 1}}}, nil},
		{"failed request bumps", 1, 2, simkv.Response{}, errors.New("etcdserver: requested lease not found")},
		{"header disagrees", 1, 2, simkv.Response{Put: &simkv.PutResponse{Header: simkv.ResponseHeader{Revision: 9}}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewRevisionMonotone(tc.before)
			c.OnApply(1, 0, p, tc.resp, tc.err, tc.before, tc.after)
			if v := c.Err(); v == nil || v.Property != property.KVRevisionMonotone {
				t.Fatal("checker accepted a bad step")
			}
		})
	}
	good := NewRevisionMonotone(1)
	good.OnApply(1, 0, p, okResp, nil, 1, 2)
	good.OnApply(2, 0, get("a"), simkv.Response{Range: &simkv.RangeResponse{Header: simkv.ResponseHeader{Revision: 2}}}, nil, 2, 2)
	if err := good.Err(); err != nil {
		t.Fatalf("good steps rejected: %v", err)
	}
	gap := NewRevisionMonotone(1)
	gap.OnApply(1, 0, p, okResp, nil, 1, 2)
	gap.OnApply(2, 0, p, simkv.Response{Put: &simkv.PutResponse{Header: simkv.ResponseHeader{Revision: 4}}}, nil, 3, 4)
	if v := gap.Err(); v == nil || v.Property != property.KVRevisionMonotone {
		t.Fatal("a revision moving between applies went unnoticed")
	}
}

func putEvent(k, v string, rev int64) simkv.Event {
	return simkv.Event{Type: simkv.EventPut, Kv: kv(k, v, rev, rev, 1)}
}

func watchLog(batches ...[]simkv.Event) *WatchLog {
	l := &WatchLog{Start: 1}
	l.Add(0, simkv.WatchResponse{Created: true})
	for i, b := range batches {
		l.Add(simclock.Time(i+1), simkv.WatchResponse{Events: b})
	}
	return l
}

func TestCheckWatchCatchesEachProperty(t *testing.T) {
	e2, e3, e3b := putEvent("a", "x", 2), putEvent("b", "y", 3), putEvent("c", "z", 3)
	good := watchLog([]simkv.Event{e2}, []simkv.Event{e3, e3b})
	if v := CheckWatch(good, 3); v != nil {
		t.Fatalf("good log rejected: %v", v)
	}
	cases := []struct {
		want property.Name
		log  *WatchLog
		rev  int64
	}{
		{property.KVWatchOrdered, watchLog([]simkv.Event{e3}, []simkv.Event{e2}), 3},
		{property.KVWatchUnique, watchLog([]simkv.Event{e2}, []simkv.Event{e2}), 2},
		{property.KVWatchAtomic, watchLog([]simkv.Event{e2, e3}, []simkv.Event{e3b}), 3},
		{property.KVWatchReliable, watchLog([]simkv.Event{e3}), 3},
	}
	for _, tc := range cases {
		t.Run(string(tc.want), func(t *testing.T) {
			v := CheckWatch(tc.log, tc.rev)
			if v == nil || v.Property != tc.want {
				t.Fatalf("got %v, want %s", v, tc.want)
			}
		})
	}
}

func TestPatchWithWatch(t *testing.T) {
	h := (&hist{}).
		op(0, 0, math.MaxInt64, put("a", "seen"), failed).
		op(0, 5, math.MaxInt64, put("a", "unseen"), failed).
		op(1, 6, 8, get("a"), got(1))
	l := watchLog([]simkv.Event{putEvent("a", "seen", 2)})
	patched := PatchWithWatch(h.ops, l)
	if len(patched) != 2 {
		t.Fatalf("want the unseen write dropped, got %d ops", len(patched))
	}
	if patched[0].Return != 1 {
		t.Fatalf("seen write's return = %d, want the watch arrival time 1", patched[0].Return)
	}
	l.Broken = errors.New("stream broke")
	if n := len(PatchWithWatch(h.ops, l)); n != 3 {
		t.Fatalf("an incomplete watch must not patch, got %d ops", n)
	}
}
