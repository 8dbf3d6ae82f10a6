// Package etcdkv adapts etcd's official Go client (go.etcd.io/etcd/client/v3)
// to the simkv.KV interface, so that protocol code written against simkv.KV
// (model/coord's etcd backend) runs unchanged over a real etcd cluster: in
// production, and in the tests that hold the simulation to a real server.
//
// Every request becomes one client call with a per-request deadline.
// Answers are converted field by field. Errors keep simkv's meaning:
// etcd's KV and lease errors become the simkv.Error with the same message
// (so errors.Is works as over the simulated store); a transport failure
// (deadline, unavailable, canceled) becomes simkv.ErrDeadlineExceeded,
// ambiguous as it is on a real network: the request may have been
// applied. Sleep sleeps on the wall clock.
//
// What it does not do: watches (simkv.KV has none) and retries (the
// protocol code decides what a retry means).
package etcdkv

import (
	"context"
	"errors"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"shardsim/realetcd/etcdpb"
	"shardsim/simkv"
)

// KV is a simkv.KV over an etcd client.
type KV struct {
	cli     *clientv3.Client
	timeout time.Duration
}

var _ simkv.KV = (*KV)(nil)

// New returns a KV over cli whose requests each get timeout (zero: 5s).
func New(cli *clientv3.Client, timeout time.Duration) *KV {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	return &KV{cli: cli, timeout: timeout}
}

func (k *KV) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), k.timeout)
}

// do runs one KV op.
func (k *KV) do(op clientv3.Op) (clientv3.OpResponse, error) {
	ctx, cancel := k.ctx()
	defer cancel()
	resp, err := k.cli.Do(ctx, op)
	return resp, mapErr(err)
}

// Range implements simkv.KV.
func (k *KV) Range(r simkv.RangeRequest) (*simkv.RangeResponse, error) {
	resp, err := k.do(rangeOp(&r))
	if err != nil {
		return nil, err
	}
	return etcdpb.Range((*pb.RangeResponse)(resp.Get())), nil
}

// Put implements simkv.KV.
func (k *KV) Put(r simkv.PutRequest) (*simkv.PutResponse, error) {
	resp, err := k.do(putOp(&r))
	if err != nil {
		return nil, err
	}
	return etcdpb.Put((*pb.PutResponse)(resp.Put())), nil
}

// DeleteRange implements simkv.KV.
func (k *KV) DeleteRange(r simkv.DeleteRangeRequest) (*simkv.DeleteRangeResponse, error) {
	resp, err := k.do(deleteOp(&r))
	if err != nil {
		return nil, err
	}
	return etcdpb.Delete((*pb.DeleteRangeResponse)(resp.Del())), nil
}

// Txn implements simkv.KV.
func (k *KV) Txn(r simkv.TxnRequest) (*simkv.TxnResponse, error) {
	resp, err := k.do(txnOp(&r))
	if err != nil {
		return nil, err
	}
	return etcdpb.Txn((*pb.TxnResponse)(resp.Txn())), nil
}

// Compact implements simkv.KV.
func (k *KV) Compact(r simkv.CompactRequest) (*simkv.CompactResponse, error) {
	ctx, cancel := k.ctx()
	defer cancel()
	var opts []clientv3.CompactOption
	if r.Physical {
		opts = append(opts, clientv3.WithCompactPhysical())
	}
	resp, err := k.cli.Compact(ctx, r.Revision, opts...)
	if err != nil {
		return nil, mapErr(err)
	}
	return &simkv.CompactResponse{Header: etcdpb.Header(resp.Header)}, nil
}

// LeaseGrant implements simkv.KV. A request naming its own id goes
// through the raw lease API (the client's Grant cannot name one).
func (k *KV) LeaseGrant(r simkv.LeaseGrantRequest) (*simkv.LeaseGrantResponse, error) {
	ctx, cancel := k.ctx()
	defer cancel()
	if r.ID != 0 {
		resp, err := pb.NewLeaseClient(k.cli.ActiveConnection()).LeaseGrant(ctx, &pb.LeaseGrantRequest{TTL: r.TTL, ID: r.ID})
		if err != nil {
			return nil, mapErr(err)
		}
		if resp.Error != "" {
			return nil, mapErr(errors.New(resp.Error))
		}
		return &simkv.LeaseGrantResponse{Header: etcdpb.Header(resp.Header), ID: resp.ID, TTL: resp.TTL}, nil
	}
	resp, err := k.cli.Grant(ctx, r.TTL)
	if err != nil {
		return nil, mapErr(err)
	}
	return &simkv.LeaseGrantResponse{Header: etcdpb.Header(resp.ResponseHeader), ID: int64(resp.ID), TTL: resp.TTL}, nil
}

// LeaseRevoke implements simkv.KV.
func (k *KV) LeaseRevoke(r simkv.LeaseRevokeRequest) (*simkv.LeaseRevokeResponse, error) {
	ctx, cancel := k.ctx()
	defer cancel()
	resp, err := k.cli.Revoke(ctx, clientv3.LeaseID(r.ID))
	if err != nil {
		return nil, mapErr(err)
	}
	return &simkv.LeaseRevokeResponse{Header: etcdpb.Header(resp.Header)}, nil
}

// LeaseKeepAlive implements simkv.KV: one keep-alive, answered with TTL 0
// when the lease no longer exists, as etcd's stream answers.
func (k *KV) LeaseKeepAlive(r simkv.LeaseKeepAliveRequest) (*simkv.LeaseKeepAliveResponse, error) {
	ctx, cancel := k.ctx()
	defer cancel()
	resp, err := k.cli.KeepAliveOnce(ctx, clientv3.LeaseID(r.ID))
	if err != nil {
		if errors.Is(mapErr(err), simkv.ErrLeaseNotFound) {
			return &simkv.LeaseKeepAliveResponse{ID: r.ID}, nil
		}
		return nil, mapErr(err)
	}
	return &simkv.LeaseKeepAliveResponse{Header: etcdpb.Header(resp.ResponseHeader), ID: int64(resp.ID), TTL: resp.TTL}, nil
}

// LeaseTimeToLive implements simkv.KV.
func (k *KV) LeaseTimeToLive(r simkv.LeaseTimeToLiveRequest) (*simkv.LeaseTimeToLiveResponse, error) {
	ctx, cancel := k.ctx()
	defer cancel()
	var opts []clientv3.LeaseOption
	if r.Keys {
		opts = append(opts, clientv3.WithAttachedKeys())
	}
	resp, err := k.cli.TimeToLive(ctx, clientv3.LeaseID(r.ID), opts...)
	if err != nil {
		return nil, mapErr(err)
	}
	out := &simkv.LeaseTimeToLiveResponse{Header: etcdpb.Header(resp.ResponseHeader), ID: int64(resp.ID), TTL: resp.TTL, GrantedTTL: resp.GrantedTTL}
	for _, key := range resp.Keys {
		out.Keys = append(out.Keys, etcdpb.Bytes(key))
	}
	return out, nil
}

// Sleep implements simkv.KV on the wall clock.
func (k *KV) Sleep(d time.Duration) { time.Sleep(d) }

// kvErrors are simkv's KV and lease errors, matched by etcd's message.
var kvErrors = []*simkv.Error{
	simkv.ErrEmptyKey, simkv.ErrKeyNotFound, simkv.ErrValueProvided, simkv.ErrLeaseProvided, simkv.ErrTooManyOps,
	simkv.ErrDuplicateKey, simkv.ErrInvalidSortOption, simkv.ErrCompacted, simkv.ErrFutureRev, simkv.ErrLeaseNotFound,
	simkv.ErrLeaseExist, simkv.ErrLeaseTTLTooLarge,
}

// mapErr turns a client error into simkv's: the KV error with etcd's
// message, or an ambiguous transport failure.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if st, ok := status.FromError(err); ok {
		msg = st.Message()
		switch st.Code() {
		case codes.DeadlineExceeded, codes.Unavailable, codes.Canceled, codes.Aborted:
			return simkv.ErrDeadlineExceeded
		}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return simkv.ErrDeadlineExceeded
	}
	for _, e := range kvErrors {
		if msg == e.Error() {
			return e
		}
	}
	return err
}
