// Package etcdpb converts etcd's protobuf answers into simkv's plain
// types, and simkv's compares into etcd's. It is the one conversion both
// the etcd client adapter (realetcd/etcdkv) and the conformance tests against
// a real etcd (realetcd/etcdconf) use, so the two cannot drift apart. Empty
// byte slices and lists come back as nil, since the wire cannot tell them
// apart, and an absent header becomes the zero header.
package etcdpb

import (
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"

	"shardsim/simkv"
)

// Bytes returns b, or nil when b is empty.
func Bytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// Header converts a response header; nil becomes the zero header.
func Header(h *pb.ResponseHeader) simkv.ResponseHeader {
	if h == nil {
		return simkv.ResponseHeader{}
	}
	return simkv.ResponseHeader{Revision: h.Revision}
}

// KV converts one key-value pair.
func KV(kv *mvccpb.KeyValue) simkv.KeyValue {
	return simkv.KeyValue{Key: Bytes(kv.Key), Value: Bytes(kv.Value), CreateRevision: kv.CreateRevision,
		ModRevision: kv.ModRevision, Version: kv.Version, Lease: kv.Lease}
}

// KVs converts a list of key-value pairs; an empty list becomes nil.
func KVs(kvs []*mvccpb.KeyValue) []simkv.KeyValue {
	var out []simkv.KeyValue
	for _, kv := range kvs {
		out = append(out, KV(kv))
	}
	return out
}

// Range converts a range answer.
func Range(r *pb.RangeResponse) *simkv.RangeResponse {
	return &simkv.RangeResponse{Header: Header(r.Header), Kvs: KVs(r.Kvs), More: r.More, Count: r.Count}
}

// Put converts a put answer.
func Put(r *pb.PutResponse) *simkv.PutResponse {
	out := &simkv.PutResponse{Header: Header(r.Header)}
	if r.PrevKv != nil {
		kv := KV(r.PrevKv)
		out.PrevKv = &kv
	}
	return out
}

// Delete converts a delete-range answer.
func Delete(r *pb.DeleteRangeResponse) *simkv.DeleteRangeResponse {
	return &simkv.DeleteRangeResponse{Header: Header(r.Header), Deleted: r.Deleted, PrevKvs: KVs(r.PrevKvs)}
}

// Txn converts a transaction answer, nested transactions included.
func Txn(r *pb.TxnResponse) *simkv.TxnResponse {
	out := &simkv.TxnResponse{Header: Header(r.Header), Succeeded: r.Succeeded}
	for _, op := range r.Responses {
		var o simkv.ResponseOp
		switch v := op.Response.(type) {
		case *pb.ResponseOp_ResponseRange:
			o.Range = Range(v.ResponseRange)
		case *pb.ResponseOp_ResponsePut:
			o.Put = Put(v.ResponsePut)
		case *pb.ResponseOp_ResponseDeleteRange:
			o.DeleteRange = Delete(v.ResponseDeleteRange)
		case *pb.ResponseOp_ResponseTxn:
			o.Txn = Txn(v.ResponseTxn)
		}
		out.Responses = append(out.Responses, o)
	}
	return out
}

// Events converts watch events; an empty list becomes nil.
func Events(evs []*mvccpb.Event) []simkv.Event {
	var out []simkv.Event
	for _, ev := range evs {
		e := simkv.Event{Type: simkv.EventType(ev.Type), Kv: KV(ev.Kv)}
		if ev.PrevKv != nil {
			p := KV(ev.PrevKv)
			e.PrevKv = &p
		}
		out = append(out, e)
	}
	return out
}

// Watch converts one watch answer with its events.
func Watch(r *pb.WatchResponse) simkv.WatchResponse {
	return simkv.WatchResponse{Header: Header(r.Header), WatchID: r.WatchId, Created: r.Created, Canceled: r.Canceled,
		CompactRevision: r.CompactRevision, CancelReason: r.CancelReason, Events: Events(r.Events)}
}

// Compare converts a transaction compare into etcd's (exact).
func Compare(c simkv.Compare) *pb.Compare {
	out := &pb.Compare{Result: pb.Compare_CompareResult(c.Result), Target: pb.Compare_CompareTarget(c.Target), Key: c.Key, RangeEnd: c.RangeEnd}
	switch c.Target {
	case simkv.CompareVersion:
		out.TargetUnion = &pb.Compare_Version{Version: c.Version}
	case simkv.CompareCreate:
		out.TargetUnion = &pb.Compare_CreateRevision{CreateRevision: c.CreateRevision}
	case simkv.CompareMod:
		out.TargetUnion = &pb.Compare_ModRevision{ModRevision: c.ModRevision}
	case simkv.CompareValue:
		out.TargetUnion = &pb.Compare_Value{Value: c.Value}
	case simkv.CompareLease:
		out.TargetUnion = &pb.Compare_Lease{Lease: c.Lease}
	}
	return out
}
