package coordcheck

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"shardsim/model/coord"
	"shardsim/property"
	"shardsim/simclock"
	"shardsim/simkv"
)

const testNS = "/t/"

var (
	tenA = coord.TenantID{0xa1}
	tenB = coord.TenantID{0xb1}
)

// durableRig feeds hand-made writes of coordination records to a
// Durable, as the simulated server would.
type durableRig struct {
	store *simkv.Store
	h     *History
	d     *Durable
	call  uint64
}

func newDurableRig(cooldown coord.LogicalDuration) *durableRig {
	store := simkv.NewStore(simkv.StoreConfig{})
	h := NewHistory()
	return &durableRig{store: store, h: h, d: NewDurable(store, testNS, 100*time.Millisecond, cooldown, h)}
}

func shardKey(t coord.TenantID, run coord.RunID, id coord.ShardID) string {
	return fmt.Sprintf("%ss/%s/%016x/%016x", testNS, t, uint64(run), uint64(id))
}

func runKey(t coord.TenantID, run coord.RunID) string {
	return fmt.Sprintf("%sr/%s/%016x", testNS, t, uint64(run))
}

func activeKey(t coord.TenantID, run coord.RunID) string {
	return fmt.Sprintf("%sa/%s/%016x", testNS, t, uint64(run))
}

func claimKey(t coord.TenantID, w coord.WorkerID) string {
	return fmt.Sprintf("%sc/%s/%016x", testNS, t, uint64(w))
}

// write applies puts (key -> value) in one transaction issued by op (nil:
// nobody) and tells the observer.
func (r *durableRig) write(op *Request, puts map[string][]byte) {
	r.writeDeleting(op, puts, nil)
}

func sortedKeys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func testRun(t coord.TenantID, run coord.RunID) coord.RunRecord {
	return coord.RunRecord{Tenant: t, Run: run, Config: coord.RunConfig{LeaseDuration: 10}, Status: coord.RunActive, RootShards: []coord.ShardID{1}}
}

func testShard(t coord.TenantID, run coord.RunID) coord.ShardRecord {
	return coord.ShardRecord{Tenant: t, Run: run, Shard: 1, Spec: coord.ShardSpec{Start: []byte("a"), End: []byte("m")},
		Status: coord.ShardActive, Fence: coord.InitialFence}
}

// seed writes an Active run with one root shard for each tenant given.
// stored is the value the etcd backend stores for a record's encoding.
func stored(enc []byte) []byte { return coord.AppendWriteStamp(enc, coord.WriteStamp{Instance: 1}) }

func (r *durableRig) seed(ts ...coord.TenantID) {
	puts := map[string][]byte{}
	for i, t := range ts {
		run := coord.RunID(i + 1)
		rr, sr := testRun(t, run), testShard(t, run)
		puts[runKey(t, run)] = stored(coord.EncodeRunRecord(&rr))
		puts[activeKey(t, run)] = coord.EncodeActiveRunEntry(&coord.ActiveRunEntry{Run: run})
		puts[shardKey(t, run, 1)] = stored(coord.EncodeShardRecord(&sr))
	}
	r.write(nil, puts)
}

func (r *durableRig) putShard(op *Request, s coord.ShardRecord) {
	r.write(op, map[string][]byte{shardKey(s.Tenant, s.Run, s.Shard): stored(coord.EncodeShardRecord(&s))})
}

func wantViolation(t *testing.T, v *property.Violation, prop property.Name) {
	t.Helper()
	if v == nil || v.Property != prop {
		t.Fatalf("want a violation of %s, got %v", prop, v)
	}
}

func TestCoordDurableAcceptsALegalStep(t *testing.T) {
	r := newDurableRig(0)
	r.seed(tenA)
	s := testShard(tenA, 1)
	s.Fence, s.Lease = 2, coord.Some(coord.LeaseHolder{Owner: 7, Deadline: 20})
	r.putShard(&Request{Kind: ReqAcquire, Tenant: tenA, Now: 10}, s)
	if v := r.d.Err(); v != nil {
		t.Fatalf("legal acquire flagged: %v", v)
	}
	if r.d.Writes != 2 || len(r.d.Snapshot().Shards) != 1 {
		t.Fatalf("observer saw %d writes and %d shards", r.d.Writes, len(r.d.Snapshot().Shards))
	}
}

// Each durable property fails on a hand-built bad step, attributed to the
// request that made it.
func TestCoordDurableCatchesBadSteps(t *testing.T) {
	leased := testShard(tenA, 1)
	leased.Fence, leased.Lease = 2, coord.Some(coord.LeaseHolder{Owner: 7, Deadline: 20})
	cases := []struct {
		prop property.Name
		do   func(r *durableRig)
	}{
		{property.CFenceMonotonicity, func(r *durableRig) {
			r.putShard(nil, leased)
			back := leased
			back.Fence = 1
			r.putShard(nil, back)
		}},
		{property.CMutualExclusion, func(r *durableRig) {
			r.putShard(&Request{Kind: ReqAcquire, Tenant: tenA, Now: 10}, leased)
			stolen := leased
			stolen.Fence, stolen.Lease = 3, coord.Some(coord.LeaseHolder{Owner: 8, Deadline: 25})
			r.putShard(&Request{Kind: ReqAcquire, Tenant: tenA, Now: 15}, stolen)
		}},
		{property.CZombieRejection, func(r *durableRig) {
			r.putShard(nil, leased)
			moved := leased
			moved.Cursor = coord.Cursor{LastKey: []byte("c")}
			zombie := coord.Lease{Tenant: tenA, Run: 1, Shard: 1, Owner: 7, Fence: 1, Deadline: 20}
			r.putShard(&Request{Kind: ReqCheckpoint, Tenant: tenA, Lease: zombie, Now: 12}, moved)
		}},
		{property.CTenantIsolation, func(r *durableRig) {
			moved := testShard(tenA, 1)
			moved.Cursor = coord.Cursor{LastKey: []byte("c")}
			r.putShard(&Request{Kind: ReqCheckpoint, Tenant: tenB, Now: 12}, moved)
		}},
		{property.CTerminalUnleased, func(r *durableRig) {
			done := leased
			done.Status = coord.ShardDone
			r.putShard(nil, done)
		}},
		{property.CCursorBounds, func(r *durableRig) {
			out := testShard(tenA, 1)
			out.Cursor = coord.Cursor{LastKey: []byte("z")}
			r.putShard(nil, out)
		}},
		{property.CRecordInvariants, func(r *durableRig) {
			r.write(nil, map[string][]byte{shardKey(tenA, 1, 1): []byte("garbage")})
		}},
		{property.CRecordInvariants, func(r *durableRig) {
			r.write(nil, map[string][]byte{activeKey(tenA, 9): coord.EncodeActiveRunEntry(&coord.ActiveRunEntry{Run: 9})})
		}},
	}
	for _, tc := range cases {
		t.Run(string(tc.prop), func(t *testing.T) {
			r := newDurableRig(0)
			r.seed(tenA, tenB)
			tc.do(r)
			wantViolation(t, r.d.Err(), tc.prop)
		})
	}
}

func TestCoordDurableCooldown(t *testing.T) {
	r := newDurableRig(5)
	r.seed(tenA)
	claim := func(at coord.LogicalTime) {
		c := coord.ClaimRecord{Worker: 3, LastClaimAt: at}
		r.write(&Request{Kind: ReqClaim, Tenant: tenA, Now: at}, map[string][]byte{claimKey(tenA, 3): coord.EncodeClaimRecord(&c)})
	}
	claim(10)
	claim(15)
	if v := r.d.Err(); v != nil {
		t.Fatalf("claims a cooldown apart flagged: %v", v)
	}
	claim(17)
	wantViolation(t, r.d.Err(), property.CCooldown)
	if !strings.Contains(r.d.Err().Detail, "claim now=17") {
		t.Fatalf("violation does not name the request: %s", r.d.Err().Detail)
	}
}

// Deletions the request does not name (a lease revoke) are found by a
// full re-read.
func TestCoordDurableSeesUnnamedDeletes(t *testing.T) {
	r := newDurableRig(0)
	r.seed(tenA)
	grant, _ := r.store.Apply(0, simkv.Request{LeaseGrant: &simkv.LeaseGrantRequest{ID: 5, TTL: 10}})
	_ = grant
	key := testNS + "o/" + tenA.String() + "/0000000000000001/0000000000000001"
	b := coord.OwnerBinding{Worker: 7, Fence: 2, Deadline: 20}
	leased := testShard(tenA, 1)
	leased.Fence, leased.Lease = 2, coord.Some(coord.LeaseHolder{Owner: 7, Deadline: 20})
	req := simkv.Request{Txn: &simkv.TxnRequest{Success: []simkv.RequestOp{
		{Put: &simkv.PutRequest{Key: []byte(shardKey(tenA, 1, 1)), Value: stored(coord.EncodeShardRecord(&leased))}},
		{Put: &simkv.PutRequest{Key: []byte(key), Value: coord.EncodeOwnerBinding(&b), Lease: 5}},
	}}}
	before := r.store.Revision()
	resp, err := r.store.Apply(0, req)
	r.d.OnApply(99, 0, req, resp, err, before, r.store.Revision())
	if len(r.d.Snapshot().Bindings) != 1 {
		t.Fatalf("binding not seen: %+v", r.d.Snapshot().Bindings)
	}
	revoke := simkv.Request{LeaseRevoke: &simkv.LeaseRevokeRequest{ID: 5}}
	before = r.store.Revision()
	resp, err = r.store.Apply(simclock.Time(time.Minute), revoke)
	r.d.OnApply(0, simclock.Time(time.Minute), revoke, resp, err, before, r.store.Revision())
	if len(r.d.Snapshot().Bindings) != 0 || r.d.Err() != nil {
		t.Fatalf("revoked binding still seen (%d) or flagged: %v", len(r.d.Snapshot().Bindings), r.d.Err())
	}
}
