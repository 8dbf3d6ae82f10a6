package scenarios

import (
	"fmt"
	"strconv"

	"shardsim/model/coord"
)

// coordTopo is the static shape of a coordination world: tenants, their
// runs and each run's root shards. Every root covers keysPerShard keys of
// the form k00000, k00001, ...; a key's number is its position.
type coordTopo struct {
	tenants      []coord.TenantID
	runs         []coordRun
	keysPerShard int
	leaseDur     coord.LogicalDuration
}

// coordRun is one run and its manifest.
type coordRun struct {
	tenant coord.TenantID
	id     coord.RunID
	roots  []coord.InitialShard
}

// newCoordTopo builds tenants x runs x shards with distinct, readable ids.
func newCoordTopo(tenants, runsPer, shardsPer, keysPerShard int, leaseDur coord.LogicalDuration) coordTopo {
	t := coordTopo{keysPerShard: keysPerShard, leaseDur: leaseDur}
	for i := 0; i < tenants; i++ {
		var id coord.TenantID
		id[0], id[31] = byte(0xa1+i), byte(i+1)
		t.tenants = append(t.tenants, id)
		for r := 0; r < runsPer; r++ {
			run := coordRun{tenant: id, id: coord.RunID(0x100*(i+1) + r + 1)}
			for s := 0; s < shardsPer; s++ {
				run.roots = append(run.roots, coord.InitialShard{
					Shard: coord.ShardID(s + 1),
					Spec:  coord.ShardSpec{Start: keyOf(s * keysPerShard), End: keyOf((s + 1) * keysPerShard)},
				})
			}
			t.runs = append(t.runs, run)
		}
	}
	return t
}

// runsOf returns the runs of one tenant, in run order.
func (t coordTopo) runsOf(tenant coord.TenantID) []coordRun {
	var out []coordRun
	for _, r := range t.runs {
		if r.tenant == tenant {
			out = append(out, r)
		}
	}
	return out
}

// keyOf returns the key at position n.
func keyOf(n int) []byte { return []byte(fmt.Sprintf("k%05d", n)) }

// keyNum returns the position of a key made by keyOf (or -1 for none).
func keyNum(k []byte) int {
	if len(k) < 2 {
		return -1
	}
	n, err := strconv.Atoi(string(k[1:]))
	if err != nil {
		return -1
	}
	return n
}

// nextKey returns the first key position a worker has not processed:
// after the cursor, or the range's start.
func nextKey(spec coord.ShardSpec, c coord.Cursor) int {
	if c.HasKey() {
		return keyNum(c.LastKey) + 1
	}
	return keyNum(spec.Start)
}
