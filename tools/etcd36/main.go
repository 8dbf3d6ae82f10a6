// Command etcd36 runs etcd 3.6 embedded from go.etcd.io/etcd/server/v3, with
// the command-line flags of the etcd binary that realetcd/etcdtest and the
// simkv conformance tests pass. Pointing SHARDSIM_ETCD at it runs those
// tests against the newest etcd 3.6 release instead of Debian's etcd 3.4.
//
// It lives in a module of its own: the server module brings a large
// dependency tree (raft, bbolt, OpenTelemetry, Prometheus, cobra) that the
// simulator must not carry, and a build tag would not keep it out of the
// main go.mod. Build it with `go build -C tools/etcd36 -o DIR/etcd36 .`.
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	etcdversion "go.etcd.io/etcd/api/v3/version"
	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "etcd36:", err)
		os.Exit(2)
	}
}

func urls(name, v string) ([]url.URL, error) {
	u, err := url.Parse(v)
	if err != nil {
		return nil, fmt.Errorf("--%s: %v", name, err)
	}
	return []url.URL{*u}, nil
}

func run(args []string) error {
	fs := flag.NewFlagSet("etcd36", flag.ContinueOnError)
	name := fs.String("name", "default", "member name")
	dir := fs.String("data-dir", "", "data directory")
	lc := fs.String("listen-client-urls", "http://127.0.0.1:2379", "client URL to listen on")
	ac := fs.String("advertise-client-urls", "http://127.0.0.1:2379", "client URL to advertise")
	lp := fs.String("listen-peer-urls", "http://127.0.0.1:2380", "peer URL to listen on")
	ap := fs.String("initial-advertise-peer-urls", "http://127.0.0.1:2380", "peer URL to advertise")
	cluster := fs.String("initial-cluster", "", "initial cluster")
	state := fs.String("initial-cluster-state", "new", "initial cluster state")
	logger := fs.String("logger", "zap", "logger")
	outputs := fs.String("log-outputs", "stderr", "log outputs")
	level := fs.String("log-level", "warn", "log level")
	maxTxnOps := fs.Uint("max-txn-ops", 128, "max operations per transaction")
	version := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *version {
		fmt.Printf("etcd Version: %s\n", etcdversion.Version)
		return nil
	}
	if *dir == "" {
		return fmt.Errorf("--data-dir is required")
	}
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir = *name, *dir
	var err error
	if cfg.ListenClientUrls, err = urls("listen-client-urls", *lc); err != nil {
		return err
	}
	if cfg.AdvertiseClientUrls, err = urls("advertise-client-urls", *ac); err != nil {
		return err
	}
	if cfg.ListenPeerUrls, err = urls("listen-peer-urls", *lp); err != nil {
		return err
	}
	if cfg.AdvertisePeerUrls, err = urls("initial-advertise-peer-urls", *ap); err != nil {
		return err
	}
	if *cluster == "" {
		*cluster = *name + "=" + *ap
	}
	cfg.InitialCluster, cfg.ClusterState = *cluster, *state
	cfg.Logger, cfg.LogOutputs, cfg.LogLevel = *logger, []string{*outputs}, *level
	cfg.MaxTxnOps = *maxTxnOps
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return err
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		e.Server.Stop()
		return fmt.Errorf("not ready after 60s")
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case err := <-e.Err():
		return err
	case <-sig:
		return nil
	}
}
