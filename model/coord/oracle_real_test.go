package coord

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"pgregory.net/rapid"

	"shardsim/realetcd/etcdkv"
	"shardsim/realetcd/etcdtest"
	"shardsim/simclock"
	"shardsim/simkv"
)

// The differential oracle over a real etcd: the same etcd backend code
// (Etcd), over etcd's official Go client through realetcd/etcdkv, against the
// reference, with the same checks (results, events, durable states, the
// property checkers after every step). It shows that the protocol code
// under test runs unchanged against the server it is written for. Every
// check gets a namespace of its own on one server.
//
// Clean mode races two coordinators as the simulated oracle does; fault
// mode loses requests and answers at the client (lossyKV), which a real
// network does too, so answers are ambiguous and the backend reads back.

// realEtcd is one real server shared by the checks of a test.
type realEtcd struct {
	kv *etcdkv.KV
	ns atomic.Int64
}

func (r *realEtcd) namespace() string { return fmt.Sprintf("/oracle/%d/", r.ns.Add(1)) }

func startRealEtcd(t *testing.T) *realEtcd {
	srv := etcdtest.Start(t)
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.Endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return &realEtcd{kv: etcdkv.New(cli, 10*time.Second)}
}

// TestDifferentialOracleRealEtcd runs the oracle's random state machine
// over a real etcd, clean (with races) and with request faults, and
// reports what it exercised: steps, races, ambiguous answers. A
// divergence fails the test.
func TestDifferentialOracleRealEtcd(t *testing.T) {
	real := startRealEtcd(t)
	for _, mode := range []struct {
		name   string
		faults bool
	}{{"clean", false}, {"faults", true}} {
		t.Run(mode.name, func(t *testing.T) {
			stats := newOracleStats()
			withRapidSteps(t, "60", func() {
				rapid.Check(t, func(rt *rapid.T) { runOracleOn(rt, DefaultConfig(), mode.faults, stats, real) })
			})
			t.Logf("real etcd, %s:\n%s", mode.name, stats.report())
			switch {
			case stats.steps == 0:
				t.Fatal("no step ran")
			case !mode.faults && stats.races == 0:
				t.Fatal("no race ran")
			case mode.faults && stats.etcd.Ambiguous == 0:
				t.Fatal("no ambiguous answer: the fault mode did not exercise the read-back")
			}
		})
	}
}

// lossyKV injects request faults at the client over any KV: a lost
// request never reaches the server, a lost answer is dropped after the
// server applied the request (both ErrDeadlineExceeded: the client cannot
// tell them apart), a refused request fails before it is sent
// (ErrUnavailable).
type lossyKV struct {
	simkv.KV
	faults  simkv.DirectFaults
	choices *simclock.Choices
	stats   simkv.DirectFaultStats
}

// call runs one request through the fault draw.
func (l *lossyKV) call(send func() error) error {
	l.stats.Calls++
	switch {
	case l.choices.Chance(l.faults.Refuse):
		l.stats.Refused++
		return simkv.ErrUnavailable
	case l.choices.Chance(l.faults.LoseRequest):
		l.stats.LostRequests++
		return simkv.ErrDeadlineExceeded
	case l.choices.Chance(l.faults.LoseResponse):
		l.stats.LostResponses++
		if err := send(); err != nil {
			return err
		}
		return simkv.ErrDeadlineExceeded
	}
	return send()
}

func (l *lossyKV) Range(r simkv.RangeRequest) (out *simkv.RangeResponse, err error) {
	err = l.call(func() (e error) { out, e = l.KV.Range(r); return })
	return out, err
}

func (l *lossyKV) Put(r simkv.PutRequest) (out *simkv.PutResponse, err error) {
	err = l.call(func() (e error) { out, e = l.KV.Put(r); return })
	return out, err
}

func (l *lossyKV) DeleteRange(r simkv.DeleteRangeRequest) (out *simkv.DeleteRangeResponse, err error) {
	err = l.call(func() (e error) { out, e = l.KV.DeleteRange(r); return })
	return out, err
}

func (l *lossyKV) Txn(r simkv.TxnRequest) (out *simkv.TxnResponse, err error) {
	err = l.call(func() (e error) { out, e = l.KV.Txn(r); return })
	return out, err
}

func (l *lossyKV) LeaseGrant(r simkv.LeaseGrantRequest) (out *simkv.LeaseGrantResponse, err error) {
	err = l.call(func() (e error) { out, e = l.KV.LeaseGrant(r); return })
	return out, err
}

func (l *lossyKV) LeaseRevoke(r simkv.LeaseRevokeRequest) (out *simkv.LeaseRevokeResponse, err error) {
	err = l.call(func() (e error) { out, e = l.KV.LeaseRevoke(r); return })
	return out, err
}

func (l *lossyKV) LeaseKeepAlive(r simkv.LeaseKeepAliveRequest) (out *simkv.LeaseKeepAliveResponse, err error) {
	err = l.call(func() (e error) { out, e = l.KV.LeaseKeepAlive(r); return })
	return out, err
}

func (l *lossyKV) LeaseTimeToLive(r simkv.LeaseTimeToLiveRequest) (out *simkv.LeaseTimeToLiveResponse, err error) {
	err = l.call(func() (e error) { out, e = l.KV.LeaseTimeToLive(r); return })
	return out, err
}
