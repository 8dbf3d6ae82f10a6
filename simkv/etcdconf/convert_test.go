package etcdconf

import (
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"

	"shardsim/simkv"
)

// Conversions between simkv's plain types and etcd's protobuf types. Going
// to protobuf is exact; coming back, empty byte slices and lists become nil
// (the wire cannot tell them apart) and absent headers become zero.

func toRange(r *simkv.RangeRequest) *pb.RangeRequest {
	return &pb.RangeRequest{
		Key: r.Key, RangeEnd: r.RangeEnd, Limit: r.Limit, Revision: r.Revision,
		SortOrder: pb.RangeRequest_SortOrder(r.SortOrder), SortTarget: pb.RangeRequest_SortTarget(r.SortTarget),
		Serializable: r.Serializable, KeysOnly: r.KeysOnly, CountOnly: r.CountOnly,
		MinModRevision: r.MinModRevision, MaxModRevision: r.MaxModRevision,
		MinCreateRevision: r.MinCreateRevision, MaxCreateRevision: r.MaxCreateRevision,
	}
}

func toPut(p *simkv.PutRequest) *pb.PutRequest {
	return &pb.PutRequest{Key: p.Key, Value: p.Value, Lease: p.Lease, PrevKv: p.PrevKv, IgnoreValue: p.IgnoreValue, IgnoreLease: p.IgnoreLease}
}

func toDelete(d *simkv.DeleteRangeRequest) *pb.DeleteRangeRequest {
	return &pb.DeleteRangeRequest{Key: d.Key, RangeEnd: d.RangeEnd, PrevKv: d.PrevKv}
}

func toCompare(c simkv.Compare) *pb.Compare {
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

func toOps(ops []simkv.RequestOp) []*pb.RequestOp {
	var out []*pb.RequestOp
	for _, op := range ops {
		o := &pb.RequestOp{}
		switch {
		case op.Range != nil:
			o.Request = &pb.RequestOp_RequestRange{RequestRange: toRange(op.Range)}
		case op.Put != nil:
			o.Request = &pb.RequestOp_RequestPut{RequestPut: toPut(op.Put)}
		case op.DeleteRange != nil:
			o.Request = &pb.RequestOp_RequestDeleteRange{RequestDeleteRange: toDelete(op.DeleteRange)}
		case op.Txn != nil:
			o.Request = &pb.RequestOp_RequestTxn{RequestTxn: toTxn(op.Txn)}
		}
		out = append(out, o)
	}
	return out
}

func toTxn(t *simkv.TxnRequest) *pb.TxnRequest {
	out := &pb.TxnRequest{Success: toOps(t.Success), Failure: toOps(t.Failure)}
	for _, c := range t.Compare {
		out.Compare = append(out.Compare, toCompare(c))
	}
	return out
}

func toWatch(w simkv.WatchRequest) *pb.WatchCreateRequest {
	out := &pb.WatchCreateRequest{Key: w.Key, RangeEnd: w.RangeEnd, StartRevision: w.StartRevision,
		PrevKv: w.PrevKv, ProgressNotify: w.ProgressNotify, Fragment: w.Fragment}
	for _, f := range w.Filters {
		out.Filters = append(out.Filters, pb.WatchCreateRequest_FilterType(f))
	}
	return out
}

func bs(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

func hdr(h *pb.ResponseHeader) simkv.ResponseHeader {
	if h == nil {
		return simkv.ResponseHeader{}
	}
	return simkv.ResponseHeader{Revision: h.Revision}
}

func fromKV(kv *mvccpb.KeyValue) simkv.KeyValue {
	return simkv.KeyValue{Key: bs(kv.Key), Value: bs(kv.Value), CreateRevision: kv.CreateRevision,
		ModRevision: kv.ModRevision, Version: kv.Version, Lease: kv.Lease}
}

func fromKVs(kvs []*mvccpb.KeyValue) []simkv.KeyValue {
	var out []simkv.KeyValue
	for _, kv := range kvs {
		out = append(out, fromKV(kv))
	}
	return out
}

func fromRange(r *pb.RangeResponse) *simkv.RangeResponse {
	return &simkv.RangeResponse{Header: hdr(r.Header), Kvs: fromKVs(r.Kvs), More: r.More, Count: r.Count}
}

func fromPut(r *pb.PutResponse) *simkv.PutResponse {
	out := &simkv.PutResponse{Header: hdr(r.Header)}
	if r.PrevKv != nil {
		kv := fromKV(r.PrevKv)
		out.PrevKv = &kv
	}
	return out
}

func fromDelete(r *pb.DeleteRangeResponse) *simkv.DeleteRangeResponse {
	return &simkv.DeleteRangeResponse{Header: hdr(r.Header), Deleted: r.Deleted, PrevKvs: fromKVs(r.PrevKvs)}
}

func fromTxn(r *pb.TxnResponse) *simkv.TxnResponse {
	out := &simkv.TxnResponse{Header: hdr(r.Header), Succeeded: r.Succeeded}
	for _, op := range r.Responses {
		var o simkv.ResponseOp
		switch v := op.Response.(type) {
		case *pb.ResponseOp_ResponseRange:
			o.Range = fromRange(v.ResponseRange)
		case *pb.ResponseOp_ResponsePut:
			o.Put = fromPut(v.ResponsePut)
		case *pb.ResponseOp_ResponseDeleteRange:
			o.DeleteRange = fromDelete(v.ResponseDeleteRange)
		case *pb.ResponseOp_ResponseTxn:
			o.Txn = fromTxn(v.ResponseTxn)
		}
		out.Responses = append(out.Responses, o)
	}
	return out
}

func fromEvents(evs []*mvccpb.Event) []simkv.Event {
	var out []simkv.Event
	for _, ev := range evs {
		e := simkv.Event{Type: simkv.EventType(ev.Type), Kv: fromKV(ev.Kv)}
		if ev.PrevKv != nil {
			p := fromKV(ev.PrevKv)
			e.PrevKv = &p
		}
		out = append(out, e)
	}
	return out
}

func fromWatch(r *pb.WatchResponse) simkv.WatchResponse {
	return simkv.WatchResponse{Header: hdr(r.Header), WatchID: r.WatchId, Created: r.Created, Canceled: r.Canceled,
		CompactRevision: r.CompactRevision, CancelReason: r.CancelReason, Events: fromEvents(r.Events)}
}
