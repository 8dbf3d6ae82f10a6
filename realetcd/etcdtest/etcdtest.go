// Package etcdtest starts a real etcd server for tests: a fresh
// single-member cluster on loopback ports with a temporary data directory,
// killed when the test ends. The binary is $SHARDSIM_ETCD if set (for
// example the embedded etcd 3.6 server built from tools/etcd36), else
// "etcd" on PATH (Debian's etcd-server installs 3.4). Without one the test
// is skipped, unless SHARDSIM_REQUIRE_ETCD=1, when it fails.
package etcdtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Binary returns the etcd binary tests should run, skipping (or failing,
// with SHARDSIM_REQUIRE_ETCD=1) the test when there is none.
func Binary(tb testing.TB) string {
	tb.Helper()
	name := "etcd"
	if p := os.Getenv("SHARDSIM_ETCD"); p != "" {
		name = p
	}
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("SHARDSIM_REQUIRE_ETCD") == "1" {
			tb.Fatalf("etcd binary %q not found and SHARDSIM_REQUIRE_ETCD=1: %v", name, err)
		}
		tb.Skipf("etcd binary %q not found; install etcd (Debian: apt-get install etcd-server) to run this test", name)
	}
	return path
}

// Log collects a server's output for failure reports.
type Log struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer for the server's output.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what the server wrote so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Server is a running etcd.
type Server struct {
	Endpoint string // host:port of the client URL
	Log      *Log
}

func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// dataDir is a fresh directory for the server's data, removed when the
// test ends: in memory (/dev/shm) where the machine has it, since etcd
// syncs every write to disk and the tests need none of that durability
// (etcd 3.4 has no flag to turn it off); else under the test's temporary
// directory.
func dataDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "shardsim-etcd-")
	if err != nil {
		return tb.TempDir()
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Start starts a fresh etcd, waits until it answers a read, and stops it
// when the test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin := Binary(tb)
	client := fmt.Sprintf("http://127.0.0.1:%d", freePort(tb))
	peer := fmt.Sprintf("http://127.0.0.1:%d", freePort(tb))
	cmd := exec.Command(bin,
		"--name", "test", "--data-dir", dataDir(tb),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "test="+peer, "--initial-cluster-state", "new",
		"--logger", "zap", "--log-outputs", "stderr", "--log-level", "warn",
	)
	log := &Log{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start etcd: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	s := &Server{Endpoint: client[len("http://"):], Log: log}
	conn, err := grpc.NewClient(s.Endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatalf("dial etcd: %v", err)
	}
	defer conn.Close()
	kv := pb.NewKVClient(conn)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := kv.Range(ctx, &pb.RangeRequest{Key: []byte("health")})
		cancel()
		if err == nil {
			return s
		}
		select {
		case <-done:
			tb.Fatalf("etcd exited before becoming healthy:\n%s", log.String())
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("etcd not healthy after 30s: %v\n%s", err, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Version returns the version of the etcd binary tests run ("3.4.23"),
// from its --version output, or "" when it does not say.
func Version(tb testing.TB) string {
	tb.Helper()
	out, err := exec.Command(Binary(tb), "--version").Output()
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "etcd Version: "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
