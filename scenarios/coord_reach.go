package scenarios

import (
	"errors"
	"fmt"

	"shardsim/checker/coordcheck"
	"shardsim/model/coord"
	"shardsim/nemesis"
	"shardsim/reach"
	"shardsim/simkv"
)

// Reachability of the coordination worlds (package reach, group "coord").
// Every validation rule of seed 004 gets a point per operation, named
// "<operation>.refused.<reason>": the lease rules refuse the wrong caller
// (another tenant, a zombie of an older fence, an expired or foreign
// lease, a shard that ended or whose run ended), the payload rules refuse
// the lease holder itself (cursor, split plan, park reason, op id reuse).
// acquire's live-lease refusal is split by who holds the lease: the caller
// itself (".own") or another worker (".other"). Beside the refusals: each
// operation's success, replays (a retry answered from the op-log, also
// after the lease was lost or the shard ended), logged refusals answered
// again, every fault kind the nemesis and the network inject, and every
// branch of the etcd backend that exists to handle a fault (EtcdStats).
//
// Left out, because no world can reach them and unit tests cover them:
// fence exhaustion (2^64 grants), the spawn cap (1024 children of one
// shard), derived id collisions (2^-63) and backend corruption.

// coordLeaseReasons are the lease rules' refusals, in validation order.
var coordLeaseReasons = []coord.Code{coord.CodeTenantMismatch, coord.CodeShardNotFound, coord.CodeRunState,
	coord.CodeShardTerminal, coord.CodeStaleFence, coord.CodeLeaseExpired, coord.CodeOwnerMismatch}

// coordPayloadReasons are the payload rules' refusals of each gated kind.
var coordPayloadReasons = map[coordcheck.RequestKind][]coord.Code{
	coordcheck.ReqCheckpoint:    {coord.CodeOpIDConflict, coord.CodeCheckpointMissingKey, coord.CodeCursorRegression, coord.CodeCursorOutOfBounds},
	coordcheck.ReqComplete:      {coord.CodeOpIDConflict, coord.CodeCursorReset, coord.CodeCursorRegression, coord.CodeCursorOutOfBounds},
	coordcheck.ReqPark:          {coord.CodeOpIDConflict, coord.CodeInvalidArgument},
	coordcheck.ReqSplitReplace:  {coord.CodeOpIDConflict, coord.CodeShardLimit},
	coordcheck.ReqSplitResidual: {coord.CodeOpIDConflict, coord.CodeShardLimit},
}

// coordSplitReasons are the split plan violations each split kind can meet.
var coordSplitReasons = map[coordcheck.RequestKind][]coord.SplitViolation{
	coordcheck.ReqSplitReplace: {coord.SplitTooFewChildren, coord.SplitEmptyRange, coord.SplitGap, coord.SplitOverlap, coord.SplitOutOfRange},
	coordcheck.ReqSplitResidual: {coord.SplitEmptyRange, coord.SplitGap, coord.SplitOverlap, coord.SplitOutOfRange,
		coord.SplitStartMoved, coord.SplitCursorOutside},
}

var coordGatedKinds = []coordcheck.RequestKind{coordcheck.ReqRenew, coordcheck.ReqCheckpoint, coordcheck.ReqComplete,
	coordcheck.ReqPark, coordcheck.ReqSplitReplace, coordcheck.ReqSplitResidual}

func slug(c coord.Code) string { return statName(c.String()) }

func splitSlug(v coord.SplitViolation) string { return statName(v.String()) }

func init() {
	var pts []reach.Point
	add := func(name, doc string) { pts = append(pts, reach.Point{Name: name, Doc: doc}) }
	for _, k := range coordGatedKinds {
		add(k.String()+".ok", "executed")
		for _, c := range coordLeaseReasons {
			add(k.String()+".refused."+slug(c), "lease rule refused the wrong caller")
		}
		for _, c := range coordPayloadReasons[k] {
			add(k.String()+".refused."+slug(c), "payload rule refused the holder")
		}
		for _, v := range coordSplitReasons[k] {
			add(k.String()+".refused.invalid_split."+splitSlug(v), "split plan refused")
		}
		if k != coordcheck.ReqRenew {
			add(k.String()+".replayed", "a retry answered from the op-log")
			add(k.String()+".replayed.after_loss", "a retry of a landed op after the lease was lost")
		}
	}
	for _, k := range []coordcheck.RequestKind{coordcheck.ReqCheckpoint, coordcheck.ReqComplete, coordcheck.ReqPark, coordcheck.ReqSplitReplace, coordcheck.ReqSplitResidual} {
		add(k.String()+".refused_again", "a retry of a refused op answered the logged refusal")
	}
	add("complete.replayed.after_terminal", "a retry of complete after the shard was Done")
	for _, p := range []string{"acquire.ok", "acquire.refused.shard_not_found", "acquire.refused.run_state_does_not_allow_the_operation",
		"acquire.refused.shard_is_terminal", "acquire.refused.shard_already_leased.own", "acquire.refused.shard_already_leased.other",
		"claim.ok", "claim.refused.no_shard_available", "claim.refused.claim_cooldown_active",
		"unpark.ok", "unpark.replayed", "unpark.refused.shard_not_found", "unpark.refused.run_state_does_not_allow_the_operation",
		"unpark.refused.shard_is_not_parked", "unpark.refused.op_id_reused_with_a_different_payload",
		"create_run.ok", "create_run.refused.run_already_exists",
		"register_shards.ok", "register_shards.replayed", "register_shards.refused.invalid_manifest",
		"register_shards.refused.run_state_does_not_allow_the_operation", "register_shards.refused.run_not_found", "register_shards.refused.shard_limit_exceeded",
		"complete_run.ok", "complete_run.replayed", "complete_run.refused.run_state_does_not_allow_the_operation", "complete_run.refused.op_id_reused_with_a_different_payload",
		"fail_run.ok", "fail_run.replayed", "fail_run.refused.run_state_does_not_allow_the_operation", "fail_run.refused.run_not_found",
		"cancel_run.ok", "cancel_run.replayed", "cancel_run.ok.initializing", "cancel_run.ok.in_flight", "cancel_run.refused.run_state_does_not_allow_the_operation",
		"complete_run.ok.in_flight", "fail_run.ok.in_flight",
		"events.dropped_at_capacity", "acquire.capacity_backoff", "list_active_runs.ok",
		"gc_stale_initializing_runs.ok", "gc_stale_initializing_runs.cancelled", "progress.watermark_advanced",
	} {
		add(p, "")
	}
	for _, p := range []string{"crash", "pause", "partition", "clock", "leader_change", "lease_storm", "stall",
		"lost_request", "lost_response", "delay", "lease_expiry"} {
		add("fault."+p, "the nemesis or the network injected it")
	}
	for _, p := range []string{"cas_conflict", "transport_retry", "ambiguous.landed", "ambiguous.not_landed",
		"storage_lease_expired", "own_late_acquire", "lease_grant", "lease_keepalive", "lease_revoke"} {
		add("etcd."+p, "a branch of the etcd backend that handles a fault or a race")
	}
	reach.Declare("coord", pts...)
}

// reachAnswer records the point a coordination answer reaches. held says,
// for a refused acquire, whether the caller's own worker holds the shard.
func (env *coordEnv) reachAnswer(op *coordcheck.Request, err error, held bool) {
	k, out := op.Kind, op.Out
	if k == coordcheck.ReqRead || out.Ambiguous {
		return
	}
	name := k.String()
	switch {
	case out.Code == 0 && out.Outcome == coord.Replayed:
		name += ".replayed"
	case out.Code == 0:
		name += ".ok"
	default:
		name += ".refused." + slug(out.Code)
		var se *coord.SplitError
		if out.Code == coord.CodeSplitInvalid && errors.As(err, &se) {
			if se.Split == coord.SplitOK {
				return // a logged refusal answered again (counted as refused_again)
			}
			name += "." + splitSlug(se.Split)
		}
		if out.Code == coord.CodeAlreadyLeased {
			name += map[bool]string{true: ".own", false: ".other"}[held]
		}
	}
	env.w.Reach(name)
}

// reachEtcd records the etcd backend's fault-handling branches that one
// coordinator took between two snapshots of its counters.
func (env *coordEnv) reachEtcd(before, after coord.EtcdStats) {
	for _, d := range []struct {
		name string
		n    int
	}{
		{"etcd.cas_conflict", after.Conflicts - before.Conflicts},
		{"etcd.transport_retry", after.Transport - before.Transport},
		{"etcd.ambiguous.landed", after.Landed - before.Landed},
		{"etcd.ambiguous.not_landed", (after.Ambiguous - after.Landed) - (before.Ambiguous - before.Landed)},
		{"etcd.storage_lease_expired", after.StorageExpired - before.StorageExpired},
		{"etcd.own_late_acquire", after.OwnLateAcquires - before.OwnLateAcquires},
		{"etcd.lease_grant", after.Grants - before.Grants},
		{"etcd.lease_keepalive", after.KeepAlives - before.KeepAlives},
		{"etcd.lease_revoke", after.Revokes - before.Revokes},
	} {
		env.w.ReachN(d.name, int64(d.n))
	}
}

// reachFaults records the faults the run injected.
func reachFaults(w *World, n nemesis.Stats, s simkv.Stats, stalls int64) {
	for _, f := range []struct {
		name string
		n    int64
	}{
		{"crash", int64(n.Crashes)}, {"pause", int64(n.Pauses)}, {"partition", int64(n.Partitions)}, {"clock", int64(n.ClockFaults)},
		{"leader_change", int64(s.LeaderChanges)}, {"lease_storm", int64(n.Storms)}, {"stall", stalls},
		{"lost_request", int64(s.LostRequests)}, {"lost_response", int64(s.LostResponses)}, {"delay", int64(s.Delayed)},
		{"lease_expiry", int64(s.Expired)},
	} {
		w.ReachN(fmt.Sprintf("fault.%s", f.name), f.n)
	}
}
