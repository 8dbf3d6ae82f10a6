package tlatrace

import (
	"strings"
	"testing"
	"time"

	"shardsim/checker/coordcheck"
	"shardsim/model/coord"
	"shardsim/simclock"
)

// A hand-built run: register a run with one root, then a worker claims it
// and checkpoints. The module must name the actions with their parameters
// and carry the changed records mapped onto the specification.
func TestCoordModule(t *testing.T) {
	var tenant coord.TenantID
	tenant[0] = 0xa1
	spec := coord.ShardSpec{Start: []byte("k00000"), End: []byte("k00008")}
	run := coord.RunRecord{Tenant: tenant, Run: 0x101, Status: coord.RunActive, RootShards: []coord.ShardID{1},
		Config: coord.RunConfig{LeaseDuration: 10}}
	run.OpLog.Push(coord.OpLogEntry{Op: 7, Kind: coord.OpKindRegisterShards})
	root := coord.ShardRecord{Tenant: tenant, Run: 0x101, Shard: 1, Spec: spec, Status: coord.ShardActive, Fence: 1}
	empty := &coord.Snapshot{}
	registered := &coord.Snapshot{Runs: []coord.RunRecord{run}, Shards: []coord.ShardRecord{root}}
	leased := root
	leased.Fence = 2
	leased.Lease = coord.Some(coord.LeaseHolder{Owner: 3, Deadline: 14})
	claimedSnap := &coord.Snapshot{Runs: []coord.RunRecord{run}, Shards: []coord.ShardRecord{leased}}
	moved := leased
	moved.Cursor = coord.Cursor{LastKey: []byte("k00003")}
	moved.OpLog.Push(coord.OpLogEntry{Op: 9, Kind: coord.OpKindCheckpoint})
	checkpointed := &coord.Snapshot{Runs: []coord.RunRecord{run}, Shards: []coord.ShardRecord{moved}}

	unit := 100 * time.Millisecond
	c := NewCoord(unit, 10, 0)
	reg := &coordcheck.Request{Kind: coordcheck.ReqRegister, Tenant: tenant, Key: coord.ShardKey{Run: 0x101}, Op: 7, Now: 3}
	claim := &coordcheck.Request{Kind: coordcheck.ReqClaim, Tenant: tenant, Worker: 3, Now: 4,
		Out: coordcheck.Answer{Done: true, Lease: coord.Lease{Tenant: tenant, Run: 0x101, Shard: 1, Owner: 3, Fence: 2}}}
	cp := &coordcheck.Request{Kind: coordcheck.ReqCheckpoint, Tenant: tenant, Worker: 3, Now: 6, Op: 9,
		Lease: coord.Lease{Tenant: tenant, Run: 0x101, Shard: 1, Owner: 3, Fence: 2}, Cursor: moved.Cursor}
	c.Observe(reg, empty, registered, simclock.Time(3*unit))
	c.Observe(claim, registered, claimedSnap, simclock.Time(5*unit)) // applied one unit after it was sent: d = -1
	c.Observe(cp, claimedSnap, checkpointed, simclock.Time(6*unit))
	var b strings.Builder
	if err := c.WriteModule(&b, "CoordTrace"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"---- MODULE CoordTrace ----",
		`TraceRunTenant == ("r101" :> "t1")`,
		`TraceManifest == ("r101" :> <<[start |-> 1, end |-> 3]>>)`, // keys k00000, k00003, k00008 -> 1, 2, 3
		"TraceMaxSkew == 1",
		`[act |-> "register_shards", r |-> "r101", op |-> "o7"`,
		`[act |-> "tick", n |-> 2]`,
		`[act |-> "claim", w |-> "w3", s |-> <<"r101", 1>>, dl |-> TRUE, d |-> -1`,
		// the claim's lease: deadline 14 at true time 5, 9 ticks left
		`lease |-> [set |-> TRUE, owner |-> "w3", ttl |-> 9], fence |-> 2`,
		`[act |-> "checkpoint", s |-> <<"r101", 1>>, owner |-> "w3", fence |-> 2, caller |-> "t1", d |-> 0, op |-> "o9", payload |-> <<2>>`,
		`opLog |-> <<[op |-> "o9", kind |-> "checkpoint", payload |-> <<2>>, result |-> "done"]>>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("module lacks %s\n%s", want, out)
		}
	}
	if c.Steps() != 3 {
		t.Errorf("steps = %d", c.Steps())
	}
}

// An op-log entry that no request of its step wrote gets a payload no
// specification step produces, so validation refuses it.
func TestUnknownPayload(t *testing.T) {
	n := &names{payloads: map[string]value{}}
	n.learnPayloads("shard x", []coord.OpLogEntry{{Op: 5, Kind: coord.OpKindPark}}, nil)
	if got := n.payloads["shard x|"+string(opName(5))]; got != "<<-1>>" {
		t.Errorf("payload of an unattributed entry = %s", got)
	}
}

// A request refused for its payload whose refusal the op-log remembers
// (OpError) is the specification's StepRefuse, not the step it asked for.
func TestRefusalLogged(t *testing.T) {
	var tenant coord.TenantID
	l := coord.Lease{Tenant: tenant, Run: 1, Shard: 1, Owner: 3, Fence: 2}
	rec := coord.ShardRecord{Tenant: tenant, Run: 1, Shard: 1, Status: coord.ShardActive, Fence: 2}
	refused := rec
	refused.OpLog.Push(coord.OpLogEntry{Op: 9, Kind: coord.OpKindCheckpoint, Result: coord.OpError, Refusal: coord.CodeCursorRegression})
	st := coordStep{prev: &coord.Snapshot{Shards: []coord.ShardRecord{rec}}, next: &coord.Snapshot{Shards: []coord.ShardRecord{refused}}}
	if !refusedLogged(st, l, 9) {
		t.Error("an OpError entry of the op is not read as a logged refusal")
	}
	if refusedLogged(st, l, 8) {
		t.Error("another op's entry is read as this op's refusal")
	}
	n := &names{}
	if got := n.entry("s", refused.OpLog.Entries()[0]); !strings.Contains(string(got), `result |-> "refused"`) {
		t.Errorf("refused entry maps to %s", got)
	}
}

// A garbage collection of stale runs is the cancel_run of the run whose
// record it changed, with the op id the collection logged.
func TestGCIsCancelRun(t *testing.T) {
	var tenant coord.TenantID
	run := coord.RunRecord{Tenant: tenant, Run: 0x22, Status: coord.RunInitializing}
	cancelled := run
	cancelled.Status = coord.RunCancelled
	cancelled.OpLog.Push(coord.OpLogEntry{Op: 0x6c00000000000022, Kind: coord.OpKindCancelRun})
	st := coordStep{op: &coordcheck.Request{Kind: coordcheck.ReqGCRuns, Tenant: tenant},
		prev: &coord.Snapshot{Runs: []coord.RunRecord{run}}, next: &coord.Snapshot{Runs: []coord.RunRecord{cancelled}}}
	c := NewCoord(time.Millisecond, 10, 0)
	acts := c.actions(&names{}, st)
	want := record(field{"act", str("cancel_run")}, field{"r", str("r22")}, field{"op", opName(0x6c00000000000022)})
	if len(acts) != 1 || record(acts[0]...) != want {
		t.Errorf("gc maps to %v, want %s", acts, want)
	}
}
