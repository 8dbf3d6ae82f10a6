package etcdconf

import (
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"

	"shardsim/realetcd/etcdpb"
	"shardsim/simkv"
)

// Conversions from simkv's plain requests to etcd's protobuf types, which
// are exact. The answers come back through realetcd/etcdpb, shared with the
// client adapter realetcd/etcdkv.

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
		out.Compare = append(out.Compare, etcdpb.Compare(c))
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
