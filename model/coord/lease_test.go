package coord

import (
	"testing"

	"shardsim/model/bugs"
)

func TestValidateLeaseOrder(t *testing.T) {
	// Each row breaks every check from its own onwards, so the row's code
	// is the one of the first failing check in the protocol's order:
	// tenant, terminal, fence, expiry, owner.
	rec := validRecord() // fence 3, lease w1 until 20
	good := Lease{Tenant: tenantA, Run: run1, Shard: 1, Owner: w1, Fence: 3, Deadline: 20}
	for _, tc := range []struct {
		name   string
		caller TenantID
		status ShardStatus
		fence  FenceEpoch
		now    LogicalTime
		owner  WorkerID
		code   Code
	}{
		{"all bad", tenantB, ShardDone, 2, 30, w2, CodeTenantMismatch},
		{"terminal first", tenantA, ShardDone, 2, 30, w2, CodeShardTerminal},
		{"fence before expiry", tenantA, ShardActive, 2, 30, w2, CodeStaleFence},
		{"expiry before owner", tenantA, ShardActive, 3, 20, w2, CodeLeaseExpired},
		{"owner", tenantA, ShardActive, 3, 19, w2, CodeOwnerMismatch},
		{"valid", tenantA, ShardActive, 3, 19, w1, codeNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rec
			if tc.status == ShardDone {
				r.Status, r.Lease = ShardDone, None[LeaseHolder]()
			}
			l := good
			l.Fence, l.Owner = tc.fence, tc.owner
			ce, ok := validateLease(&r, StepEnv{Tenant: tc.caller, Now: tc.now}, l)
			if ok != (tc.code == codeNone) || ce.Code != tc.code {
				t.Fatalf("got %v ok=%t, want %v", ce.Code, ok, tc.code)
			}
		})
	}
	t.Run("released lease counts as expired", func(t *testing.T) {
		r := rec
		r.Lease = None[LeaseHolder]()
		if ce, _ := validateLease(&r, StepEnv{Tenant: tenantA, Now: 1}, good); ce.Code != CodeLeaseExpired {
			t.Fatalf("got %v", ce.Code)
		}
	})
	t.Run("lease of another tenant", func(t *testing.T) {
		l := good
		l.Tenant = tenantB
		if ce, _ := validateLease(&rec, StepEnv{Tenant: tenantA, Now: 1}, l); ce.Code != CodeTenantMismatch || ce.Tenant != tenantA {
			t.Fatalf("got %+v", ce)
		}
		if _, ok := checkLeaseScope(tenantA, l, bugs.None); ok {
			t.Fatal("scope check passed a foreign lease")
		}
	})
}
