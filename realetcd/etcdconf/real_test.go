package etcdconf

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/grpc/status"

	"shardsim/realetcd/etcdpb"
	"shardsim/simkv"
)

// wireErr is an error as a client sees it: gRPC code and message.
type wireErr struct {
	Code uint32
	Msg  string
}

func realErr(err error) *wireErr {
	if err == nil {
		return nil
	}
	st := status.Convert(err)
	return &wireErr{Code: uint32(st.Code()), Msg: st.Message()}
}

func modelErr(err error) *wireErr {
	if err == nil {
		return nil
	}
	var e *simkv.Error
	if errors.As(err, &e) {
		return &wireErr{Code: uint32(e.Code()), Msg: e.Error()}
	}
	return &wireErr{Code: 2, Msg: err.Error()}
}

// client drives the real server: unary calls, one keep-alive stream and
// one watch stream whose responses a goroutine collects by watch id.
type client struct {
	srv *etcdServer
	ka  pb.Lease_LeaseKeepAliveClient
	ws  pb.Watch_WatchClient

	mu      sync.Mutex
	watches map[int64][]simkv.WatchResponse
	werr    error
}

func newClient(tb testing.TB, srv *etcdServer) *client {
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	ka, err := srv.lease.LeaseKeepAlive(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	ws, err := srv.watch.Watch(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	c := &client{srv: srv, ka: ka, ws: ws, watches: map[int64][]simkv.WatchResponse{}}
	go c.recvWatches()
	return c
}

func (c *client) recvWatches() {
	for {
		r, err := c.ws.Recv()
		c.mu.Lock()
		if err != nil {
			c.werr = err
			c.mu.Unlock()
			return
		}
		c.watches[r.WatchId] = append(c.watches[r.WatchId], etcdpb.Watch(r))
		c.mu.Unlock()
	}
}

// received returns a copy of the responses received for a watch id.
func (c *client) received(id int64) ([]simkv.WatchResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]simkv.WatchResponse(nil), c.watches[id]...), c.werr
}

// waitFor polls until cond holds on the responses of a watch id, or the
// timeout passes.
func (c *client) waitFor(id int64, timeout time.Duration, cond func([]simkv.WatchResponse) bool) []simkv.WatchResponse {
	deadline := time.Now().Add(timeout)
	for {
		got, err := c.received(id)
		if cond(got) || err != nil || time.Now().After(deadline) {
			return got
		}
		time.Sleep(200 * time.Microsecond)
	}
}

func (c *client) watch(w simkv.WatchRequest) error {
	return c.ws.Send(&pb.WatchRequest{RequestUnion: &pb.WatchRequest_CreateRequest{CreateRequest: toWatch(w)}})
}

func (c *client) cancelWatch(id int64) error {
	return c.ws.Send(&pb.WatchRequest{RequestUnion: &pb.WatchRequest_CancelRequest{CancelRequest: &pb.WatchCancelRequest{WatchId: id}}})
}

// do sends one request to the real server and converts its answer.
func (c *client) do(req simkv.Request) (simkv.Response, *wireErr) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := c.srv
	var out simkv.Response
	var err error
	switch {
	case req.Range != nil:
		var r *pb.RangeResponse
		if r, err = s.kv.Range(ctx, toRange(req.Range)); err == nil {
			out.Range = etcdpb.Range(r)
		}
	case req.Put != nil:
		var r *pb.PutResponse
		if r, err = s.kv.Put(ctx, toPut(req.Put)); err == nil {
			out.Put = etcdpb.Put(r)
		}
	case req.DeleteRange != nil:
		var r *pb.DeleteRangeResponse
		if r, err = s.kv.DeleteRange(ctx, toDelete(req.DeleteRange)); err == nil {
			out.DeleteRange = etcdpb.Delete(r)
		}
	case req.Txn != nil:
		var r *pb.TxnResponse
		if r, err = s.kv.Txn(ctx, toTxn(req.Txn)); err == nil {
			out.Txn = etcdpb.Txn(r)
		}
	case req.Compact != nil:
		var r *pb.CompactionResponse
		if r, err = s.kv.Compact(ctx, &pb.CompactionRequest{Revision: req.Compact.Revision, Physical: req.Compact.Physical}); err == nil {
			out.Compact = &simkv.CompactResponse{Header: etcdpb.Header(r.Header)}
		}
	case req.LeaseGrant != nil:
		var r *pb.LeaseGrantResponse
		if r, err = s.lease.LeaseGrant(ctx, &pb.LeaseGrantRequest{ID: req.LeaseGrant.ID, TTL: req.LeaseGrant.TTL}); err == nil {
			out.LeaseGrant = &simkv.LeaseGrantResponse{Header: etcdpb.Header(r.Header), ID: r.ID, TTL: r.TTL}
		}
	case req.LeaseRevoke != nil:
		var r *pb.LeaseRevokeResponse
		if r, err = s.lease.LeaseRevoke(ctx, &pb.LeaseRevokeRequest{ID: req.LeaseRevoke.ID}); err == nil {
			out.LeaseRevoke = &simkv.LeaseRevokeResponse{Header: etcdpb.Header(r.Header)}
		}
	case req.LeaseKeepAlive != nil:
		if err = c.ka.Send(&pb.LeaseKeepAliveRequest{ID: req.LeaseKeepAlive.ID}); err == nil {
			var r *pb.LeaseKeepAliveResponse
			if r, err = c.ka.Recv(); err == nil {
				out.LeaseKeepAlive = &simkv.LeaseKeepAliveResponse{Header: etcdpb.Header(r.Header), ID: r.ID, TTL: r.TTL}
			}
		}
	case req.LeaseTimeToLive != nil:
		var r *pb.LeaseTimeToLiveResponse
		if r, err = s.lease.LeaseTimeToLive(ctx, &pb.LeaseTimeToLiveRequest{ID: req.LeaseTimeToLive.ID, Keys: req.LeaseTimeToLive.Keys}); err == nil {
			t := &simkv.LeaseTimeToLiveResponse{Header: etcdpb.Header(r.Header), ID: r.ID, TTL: r.TTL, GrantedTTL: r.GrantedTTL, Keys: r.Keys}
			// etcd lists a lease's keys in map order.
			sort.Slice(t.Keys, func(i, j int) bool { return string(t.Keys[i]) < string(t.Keys[j]) })
			out.LeaseTimeToLive = t
		}
	case req.LeaseLeases != nil:
		var r *pb.LeaseLeasesResponse
		if r, err = s.lease.LeaseLeases(ctx, &pb.LeaseLeasesRequest{}); err == nil {
			l := &simkv.LeaseLeasesResponse{Header: etcdpb.Header(r.Header)}
			for _, st := range r.Leases {
				l.Leases = append(l.Leases, st.ID)
			}
			out.LeaseLeases = l
		}
	}
	if err != nil {
		return simkv.Response{}, realErr(err)
	}
	return out, nil
}
