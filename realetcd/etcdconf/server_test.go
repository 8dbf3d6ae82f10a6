package etcdconf

import (
	"testing"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"shardsim/realetcd/etcdtest"
)

// etcdServer is a real etcd process on loopback (started by
// realetcd/etcdtest) with raw gRPC clients to it: the conformance suite
// speaks etcd's protocol directly, not through the client library.
type etcdServer struct {
	conn  *grpc.ClientConn
	kv    pb.KVClient
	lease pb.LeaseClient
	watch pb.WatchClient
	log   *etcdtest.Log
}

// startEtcd starts a fresh single-member etcd (skipping the test when
// there is none, failing instead with SHARDSIM_REQUIRE_ETCD=1), dials it,
// and stops both when the test ends.
func startEtcd(tb testing.TB) *etcdServer {
	tb.Helper()
	srv := etcdtest.Start(tb)
	conn, err := grpc.NewClient(srv.Endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatalf("dial etcd: %v", err)
	}
	tb.Cleanup(func() { conn.Close() })
	return &etcdServer{conn: conn, kv: pb.NewKVClient(conn), lease: pb.NewLeaseClient(conn), watch: pb.NewWatchClient(conn), log: srv.Log}
}
