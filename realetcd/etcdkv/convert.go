package etcdkv

import (
	clientv3 "go.etcd.io/etcd/client/v3"

	"shardsim/realetcd/etcdpb"
	"shardsim/simkv"
)

// Requests become the client's ops; answers come back through
// realetcd/etcdpb. Empty byte slices and lists come back as nil (the wire
// cannot tell them apart), as over the simulated store's gRPC mirror.

func rangeOp(r *simkv.RangeRequest) clientv3.Op {
	opts := []clientv3.OpOption{
		clientv3.WithLimit(r.Limit), clientv3.WithRev(r.Revision),
		clientv3.WithSort(clientv3.SortTarget(r.SortTarget), clientv3.SortOrder(r.SortOrder)),
		clientv3.WithMinModRev(r.MinModRevision), clientv3.WithMaxModRev(r.MaxModRevision),
		clientv3.WithMinCreateRev(r.MinCreateRevision), clientv3.WithMaxCreateRev(r.MaxCreateRevision),
	}
	if len(r.RangeEnd) > 0 {
		opts = append(opts, clientv3.WithRange(string(r.RangeEnd)))
	}
	if r.Serializable {
		opts = append(opts, clientv3.WithSerializable())
	}
	if r.KeysOnly {
		opts = append(opts, clientv3.WithKeysOnly())
	}
	if r.CountOnly {
		opts = append(opts, clientv3.WithCountOnly())
	}
	return clientv3.OpGet(string(r.Key), opts...)
}

func putOp(p *simkv.PutRequest) clientv3.Op {
	var opts []clientv3.OpOption
	if p.Lease != 0 {
		opts = append(opts, clientv3.WithLease(clientv3.LeaseID(p.Lease)))
	}
	if p.PrevKv {
		opts = append(opts, clientv3.WithPrevKV())
	}
	if p.IgnoreValue {
		opts = append(opts, clientv3.WithIgnoreValue())
	}
	if p.IgnoreLease {
		opts = append(opts, clientv3.WithIgnoreLease())
	}
	return clientv3.OpPut(string(p.Key), string(p.Value), opts...)
}

func deleteOp(d *simkv.DeleteRangeRequest) clientv3.Op {
	var opts []clientv3.OpOption
	if len(d.RangeEnd) > 0 {
		opts = append(opts, clientv3.WithRange(string(d.RangeEnd)))
	}
	if d.PrevKv {
		opts = append(opts, clientv3.WithPrevKV())
	}
	return clientv3.OpDelete(string(d.Key), opts...)
}

func compare(c simkv.Compare) clientv3.Cmp {
	return clientv3.Cmp(*etcdpb.Compare(c))
}

func ops(in []simkv.RequestOp) []clientv3.Op {
	out := make([]clientv3.Op, 0, len(in))
	for _, op := range in {
		switch {
		case op.Range != nil:
			out = append(out, rangeOp(op.Range))
		case op.Put != nil:
			out = append(out, putOp(op.Put))
		case op.DeleteRange != nil:
			out = append(out, deleteOp(op.DeleteRange))
		case op.Txn != nil:
			out = append(out, txnOp(op.Txn))
		}
	}
	return out
}

func txnOp(t *simkv.TxnRequest) clientv3.Op {
	cmps := make([]clientv3.Cmp, len(t.Compare))
	for i, c := range t.Compare {
		cmps[i] = compare(c)
	}
	return clientv3.OpTxn(cmps, ops(t.Success), ops(t.Failure))
}
