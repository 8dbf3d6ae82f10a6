package etcdkv

import (
	"errors"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"shardsim/realetcd/etcdtest"
	"shardsim/simkv"
)

// The adapter against a real etcd: answers converted field by field, and
// etcd's errors turned into simkv's, so errors.Is works as over the
// simulated store.
func TestAdapterOverARealEtcd(t *testing.T) {
	srv := etcdtest.Start(t)
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.Endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	kv := New(cli, 5*time.Second)

	g, err := kv.LeaseGrant(simkv.LeaseGrantRequest{TTL: 60})
	if err != nil || g.ID == 0 || g.TTL != 60 {
		t.Fatalf("grant %+v %v", g, err)
	}
	p, err := kv.Put(simkv.PutRequest{Key: []byte("a"), Value: []byte("1"), Lease: g.ID})
	if err != nil || p.Header.Revision < 2 {
		t.Fatalf("put %+v %v", p, err)
	}
	txn, err := kv.Txn(simkv.TxnRequest{
		Compare: []simkv.Compare{{Target: simkv.CompareMod, Result: simkv.CompareEqual, Key: []byte("a"), ModRevision: p.Header.Revision}},
		Success: []simkv.RequestOp{
			{Put: &simkv.PutRequest{Key: []byte("b"), Value: []byte("2"), PrevKv: true}},
			{Range: &simkv.RangeRequest{Key: []byte("a"), RangeEnd: []byte("c")}},
		},
	})
	if err != nil || !txn.Succeeded || len(txn.Responses) != 2 {
		t.Fatalf("txn %+v %v", txn, err)
	}
	if r := txn.Responses[1].Range; r == nil || len(r.Kvs) != 2 || string(r.Kvs[0].Value) != "1" || r.Kvs[0].Lease != g.ID {
		t.Fatalf("range in txn %+v", txn.Responses[1])
	}
	cnt, err := kv.Range(simkv.RangeRequest{Key: []byte("a"), RangeEnd: []byte("c"), CountOnly: true})
	if err != nil || cnt.Count != 2 || len(cnt.Kvs) != 0 {
		t.Fatalf("count %+v %v", cnt, err)
	}
	ttl, err := kv.LeaseTimeToLive(simkv.LeaseTimeToLiveRequest{ID: g.ID, Keys: true})
	if err != nil || ttl.GrantedTTL != 60 || len(ttl.Keys) != 1 {
		t.Fatalf("time to live %+v %v", ttl, err)
	}
	if _, err := kv.LeaseRevoke(simkv.LeaseRevokeRequest{ID: g.ID}); err != nil {
		t.Fatal(err)
	}
	if ka, err := kv.LeaseKeepAlive(simkv.LeaseKeepAliveRequest{ID: g.ID}); err != nil || ka.TTL != 0 {
		t.Fatalf("keep-alive of a revoked lease: %+v %v", ka, err)
	}
	if _, err := kv.Put(simkv.PutRequest{Key: []byte("c"), Lease: g.ID}); !errors.Is(err, simkv.ErrLeaseNotFound) {
		t.Fatalf("put with a revoked lease: %v", err)
	}
	d, err := kv.DeleteRange(simkv.DeleteRangeRequest{Key: []byte("a"), RangeEnd: []byte("z"), PrevKv: true})
	if err != nil || d.Deleted != 1 || len(d.PrevKvs) != 1 { // a went with its lease
		t.Fatalf("delete %+v %v", d, err)
	}
	if _, err := kv.Compact(simkv.CompactRequest{Revision: d.Header.Revision}); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Range(simkv.RangeRequest{Key: []byte("a"), Revision: 1}); !errors.Is(err, simkv.ErrCompacted) {
		t.Fatalf("range at a compacted revision: %v", err)
	}
	if _, err := kv.Range(simkv.RangeRequest{}); !errors.Is(err, simkv.ErrEmptyKey) {
		t.Fatalf("range of no key: %v", err)
	}
}

// A request the server cannot answer in time is ambiguous, as simkv's
// network makes it.
func TestAdapterMapsTransportFailures(t *testing.T) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:1"}, DialTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	_, err = New(cli, 200*time.Millisecond).Put(simkv.PutRequest{Key: []byte("a")})
	if !simkv.IsIndeterminate(err) {
		t.Fatalf("put to nowhere: %v", err)
	}
}
