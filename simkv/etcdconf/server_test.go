package etcdconf

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"sync"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"shardsim/simkv/etcdtest"
)

// etcdServer is a real etcd process on loopback with gRPC clients to it.
type etcdServer struct {
	conn  *grpc.ClientConn
	kv    pb.KVClient
	lease pb.LeaseClient
	watch pb.WatchClient
	log   *syncBuffer
}

// syncBuffer collects the server's log for failure reports.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// requireEtcd returns the path of the etcd binary (see simkv/etcdtest:
// $SHARDSIM_ETCD, else etcd on PATH), skipping the test when there is
// none unless SHARDSIM_REQUIRE_ETCD=1.
func requireEtcd(tb testing.TB) string { return etcdtest.Binary(tb) }

// freePort asks the kernel for an unused loopback port.
func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startEtcd starts a fresh single-member etcd with a temporary data dir,
// waits until it answers, and kills it when the test ends.
func startEtcd(tb testing.TB) *etcdServer {
	tb.Helper()
	bin := requireEtcd(tb)
	dir := tb.TempDir()
	client := fmt.Sprintf("http://127.0.0.1:%d", freePort(tb))
	peer := fmt.Sprintf("http://127.0.0.1:%d", freePort(tb))
	cmd := exec.Command(bin,
		"--name", "conf",
		"--data-dir", dir,
		"--listen-client-urls", client,
		"--advertise-client-urls", client,
		"--listen-peer-urls", peer,
		"--initial-advertise-peer-urls", peer,
		"--initial-cluster", "conf="+peer,
		"--initial-cluster-state", "new",
		"--logger", "zap",
		"--log-outputs", "stderr",
		"--log-level", "warn",
	)
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start etcd: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	conn, err := grpc.NewClient(client[len("http://"):], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatalf("dial etcd: %v", err)
	}
	tb.Cleanup(func() { conn.Close() })
	s := &etcdServer{conn: conn, kv: pb.NewKVClient(conn), lease: pb.NewLeaseClient(conn), watch: pb.NewWatchClient(conn), log: logs}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := s.kv.Range(ctx, &pb.RangeRequest{Key: []byte("health")})
		cancel()
		if err == nil {
			return s
		}
		select {
		case <-done:
			tb.Fatalf("etcd exited before becoming healthy:\n%s", logs.String())
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("etcd not healthy after 30s: %v\n%s", err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
