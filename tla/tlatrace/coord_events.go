package tlatrace

import (
	"fmt"
	"strings"

	"shardsim/checker/coordcheck"
	"shardsim/model/coord"
)

// learnOrigins finds, step by step, the request that created each derived
// shard (its spawned entry is [op, kind]) and each op-log entry (whose
// payload the specification keeps instead of Go's payload hash).
func (c *Coord) learnOrigins(n *names) {
	for _, st := range c.steps {
		prevShards := map[shardRef]*coord.ShardRecord{}
		for i := range st.prev.Shards {
			prevShards[refOf(&st.prev.Shards[i])] = &st.prev.Shards[i]
		}
		for i := range st.next.Shards {
			r := &st.next.Shards[i]
			p := prevShards[refOf(r)]
			old := 0
			if p != nil {
				old = len(p.Spawned)
			}
			for _, id := range r.Spawned[min(old, len(r.Spawned)):] {
				n.spawnOp[shardRef{r.Tenant, r.Run, id}] = spawnEntry(st.op)
			}
			n.learnPayloads(scopeShard(r), r.OpLog.Entries(), st.op)
		}
		for _, r := range st.next.Runs {
			n.learnPayloads("run "+runName(r.Run), r.OpLog.Entries(), st.op)
		}
	}
}

func scopeShard(r *coord.ShardRecord) string {
	return fmt.Sprintf("shard %x/%x/%x", r.Tenant[:4], uint64(r.Run), uint64(r.Shard))
}

// spawnEntry is the spawned-list entry a split request leaves.
func spawnEntry(op *coordcheck.Request) value {
	if op == nil {
		return record(field{"op", str("?")}, field{"kind", str("?")})
	}
	kind := "child"
	if op.Kind == coordcheck.ReqSplitResidual {
		kind = "residual"
	}
	return record(field{"op", opName(op.Op)}, field{"kind", str(kind)})
}

// learnPayloads records the payload of every entry of scope's op-log not
// seen before: the payload of the request that wrote it (unknown, which
// validation then refuses, when another request wrote it).
func (n *names) learnPayloads(scope string, entries []coord.OpLogEntry, op *coordcheck.Request) {
	for _, e := range entries {
		k := scope + "|" + string(opName(e.Op))
		if _, ok := n.payloads[k]; ok {
			continue
		}
		if strings.HasPrefix(scope, "run ") {
			n.payloads[k] = tuple() // run operations carry no payload the specification keeps
		} else if op != nil && op.Op == e.Op {
			n.payloads[k] = n.payload(op)
		} else {
			n.payloads[k] = tuple(num(-1))
		}
	}
}

// payload is the specification's payload of a request (a tuple of integers
// standing for Go's payload hash).
func (n *names) payload(op *coordcheck.Request) value {
	switch op.Kind {
	case coordcheck.ReqCheckpoint, coordcheck.ReqComplete:
		return tuple(num(n.rank(op.Cursor.LastKey)))
	case coordcheck.ReqPark:
		return tuple(num(int64(op.Reason)))
	case coordcheck.ReqSplitReplace:
		var vs []value
		for _, s := range op.Replace.Children {
			vs = append(vs, num(n.rank(s.Start)), num(n.end(s.End)))
		}
		return tuple(vs...)
	case coordcheck.ReqSplitResidual:
		p, r := op.Residual.Parent, op.Residual.Residual
		return tuple(num(n.rank(p.Start)), num(n.end(p.End)), num(n.rank(r.Start)), num(n.end(r.End)))
	}
	return tuple()
}

// shardValue maps a shard record at true logical time now.
func (n *names) shardValue(r *coord.ShardRecord, now int64) value {
	status := [...]string{"Active", "Done", "Split", "Parked"}[r.Status]
	reason := int64(-1)
	if r.ParkReason.Set {
		reason = int64(r.ParkReason.Val)
	}
	parent := tuple()
	if r.Parent.Set {
		parent = n.ids[shardRef{r.Tenant, r.Run, r.Parent.Val}]
	}
	var spawned, log []value
	for _, id := range r.Spawned {
		spawned = append(spawned, n.spawnOp[shardRef{r.Tenant, r.Run, id}])
	}
	for _, e := range r.OpLog.Entries() {
		log = append(log, n.entry(scopeShard(r), e))
	}
	return record(field{"spec", n.spec(r.Spec)}, field{"status", str(status)}, field{"parkReason", num(reason)},
		field{"lease", n.lease(r.Lease, now)}, field{"fence", num(int64(r.Fence))},
		field{"cursor", num(n.rank(r.Cursor.LastKey))}, field{"parent", parent},
		field{"spawned", tuple(spawned...)}, field{"opLog", tuple(log...)})
}

// resultNames are the specification's names of OpResult.
var resultNames = map[coord.OpResult]string{coord.OpCompleted: "done", coord.OpError: "refused", coord.OpSuperseded: "superseded"}

func (n *names) entry(scope string, e coord.OpLogEntry) value {
	return record(field{"op", opName(e.Op)}, field{"kind", str(e.Kind.String())},
		field{"payload", n.payloads[scope+"|"+string(opName(e.Op))]}, field{"result", str(resultNames[e.Result])})
}

// lease maps a record's lease: its ttl is the deadline minus true time,
// held at -maxSkew once it is dead for every request.
func (n *names) lease(h coord.Opt[coord.LeaseHolder], now int64) value {
	if !h.Set {
		return record(field{"set", boolean(false)}, field{"owner", str("none")}, field{"ttl", num(-n.maxSkew)})
	}
	ttl := max(int64(h.Val.Deadline)-now, -n.maxSkew)
	return record(field{"set", boolean(true)}, field{"owner", str(n.workers[h.Val.Owner])}, field{"ttl", num(ttl)})
}

func (n *names) runValue(r *coord.RunRecord) value {
	status := [...]string{"Initializing", "Active", "Done", "Failed", "Cancelled"}[r.Status]
	var log []value
	for _, e := range r.OpLog.Entries() {
		log = append(log, n.entry("run "+runName(r.Run), e))
	}
	return record(field{"status", str(status)}, field{"opLog", tuple(log...)})
}

// claimValue maps a claim record: ticks since the claim, or no record once
// the cooldown has passed for every request.
func (n *names) claimValue(last coord.LogicalTime, set bool, now int64, cooldown int64) value {
	age := now - int64(last)
	if !set || cooldown == 0 || age >= cooldown+n.maxSkew {
		return record(field{"set", boolean(false)}, field{"age", num(0)}, field{"early", boolean(false)})
	}
	return record(field{"set", boolean(true)}, field{"age", num(age)}, field{"early", boolean(false)})
}
