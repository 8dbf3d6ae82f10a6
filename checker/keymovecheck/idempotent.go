package keymovecheck

import (
	"fmt"
	"shardsim/property"

	"shardsim/model/keymove"
	"shardsim/simkv"
)

// Rerun is how KM.Idempotent re-runs the plan: the executor's
// configuration (the same options and bugs as the run).
type Rerun struct {
	Config keymove.Config
	// MaxReruns bounds how many checkpoints are re-run from (the last one
	// always, the rest spread evenly over the run). Zero means 8.
	MaxReruns int
}

// keyEnd is what a key ends as: its owner, the owner's data, the key's
// state.
type keyEnd struct {
	owner keymove.ShardID
	data  string
	found bool
	state keymove.State
}

// CheckIdempotent is KM.Idempotent, checked by doing it: for a spread of
// the checkpoints that landed during the run, it copies the final stores,
// puts that checkpoint back, runs the same plan again over the copies
// (fault-free, one worker at a time) and compares the end with the run's.
// A key the run finished Done must end Done with the same owner and data;
// a key the run Failed may now move (a fault-free re-run can succeed where
// a faulty run gave up), and then its owner must hold its value; keys
// outside the plan must not change. Re-running from the final checkpoint
// must change nothing at all.
func (d *Durable) CheckIdempotent(r Rerun) *property.Violation {
	if d.ck == nil {
		return nil
	}
	actual := d.ends(d.cfg.Meta, d.cfg.Shards, d.ck)
	for _, j := range rerunPoints(len(d.ckpts), r.MaxReruns) {
		meta, shards := d.cloneStores()
		ck, _, err := d.rerunFrom(meta, shards, d.ckpts[j], r.Config)
		if err != nil {
			return violation(property.KMIdempotent, "", "re-running from checkpoint %d of %d failed: %v", j+1, len(d.ckpts), err)
		}
		if v := d.compareEnds(actual, d.ends(meta, shards, ck), ck, j == len(d.ckpts)-1); v != "" {
			return violation(property.KMIdempotent, "", "re-running the plan from checkpoint %d of %d (seq %d): %s", j+1, len(d.ckpts), seqOf(d.ckpts[j]), v)
		}
	}
	return nil
}

// rerunPoints picks up to max checkpoint positions: the last, and the rest
// spread evenly from the first.
func rerunPoints(n, max int) []int {
	if max <= 0 {
		max = 8
	}
	if n <= max {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	var out []int
	for i := 0; i < max-1; i++ {
		out = append(out, i*(n-1)/(max-1))
	}
	return append(out, n-1)
}

func (d *Durable) cloneStores() (*simkv.Store, map[keymove.ShardID]*simkv.Store) {
	shards := map[keymove.ShardID]*simkv.Store{}
	for id, s := range d.cfg.Shards {
		shards[id] = s.Clone()
	}
	return d.cfg.Meta.Clone(), shards
}

// rerunFrom writes ckpt back as the plan's checkpoint and runs the plan.
func (d *Durable) rerunFrom(meta *simkv.Store, shards map[keymove.ShardID]*simkv.Store, ckpt []byte, cfg keymove.Config) (*keymove.Checkpoint, keymove.Summary, error) {
	if _, err := meta.Apply(0, simkv.Request{Put: &simkv.PutRequest{Key: d.cfg.Keys.CheckpointKey(d.cfg.Plan.ID), Value: ckpt}}); err != nil {
		return nil, keymove.Summary{}, err
	}
	rt := &keymove.Sequential{MetaKV: simkv.NewDirect(meta, 0), ShardKV: map[keymove.ShardID]simkv.KV{}}
	for id, s := range shards {
		rt.ShardKV[id] = simkv.NewDirect(s, 0)
	}
	cfg.Hooks = keymove.Hooks{}
	ex, err := keymove.NewExecutor(d.cfg.Plan, cfg)
	if err != nil {
		return nil, keymove.Summary{}, err
	}
	sum, err := ex.Run(rt)
	if err != nil {
		return nil, sum, err
	}
	ck := ex.Checkpoint()
	return &ck, sum, nil
}

// ends reads every key's end state from stores.
func (d *Durable) ends(meta *simkv.Store, shards map[keymove.ShardID]*simkv.Store, ck *keymove.Checkpoint) map[string]keyEnd {
	out := map[string]keyEnd{}
	start, stop := d.cfg.Keys.MapRange()
	resp, _ := meta.Apply(0, simkv.Request{Range: &simkv.RangeRequest{Key: start, RangeEnd: stop}})
	for _, kv := range resp.Range.Kvs {
		k, _ := d.cfg.Keys.MapEntryKey(kv.Key)
		e := keyEnd{owner: keymove.ShardID(kv.Value), state: keymove.Planned}
		if s := shards[e.owner]; s != nil {
			r, _ := s.Apply(0, simkv.Request{Range: &simkv.RangeRequest{Key: keymove.DataKey(k)}})
			if len(r.Range.Kvs) == 1 {
				e.data, e.found = string(r.Range.Kvs[0].Value), true
			}
		}
		if i := d.cfg.Plan.Index(k); i >= 0 && ck != nil {
			e.state = ck.Keys[i].State
		}
		out[k] = e
	}
	return out
}

// compareEnds returns what differs, or "". A key the run Failed may end
// Done in the re-run, holding its latest value (or, under force, the copy
// the re-run forced).
func (d *Durable) compareEnds(actual, rerun map[string]keyEnd, rerunCk *keymove.Checkpoint, strict bool) string {
	for _, k := range d.sortedKeys() {
		a, b := actual[k], rerun[k]
		if a == b {
			continue
		}
		i := d.cfg.Plan.Index(k)
		if !strict && i >= 0 && a.state == keymove.Failed {
			if b.state == keymove.Failed && b.owner == a.owner && b.data == a.data && b.found == a.found {
				continue
			}
			want, has := d.Latest(k)
			forced := d.cfg.Force && rerunCk.Keys[i].Forced
			if b.state == keymove.Done && b.owner == d.cfg.Plan.Moves[i].Target && (!has || forced || (b.found && b.data == want)) {
				continue
			}
		}
		return fmt.Sprintf("key %q ended %s on %s holding %q, the run ended it %s on %s holding %q", k, b.state, b.owner, b.data, a.state, a.owner, a.data)
	}
	return ""
}

func seqOf(raw []byte) uint64 {
	var c keymove.Checkpoint
	if err := jsonUnmarshal(raw, &c); err != nil {
		return 0
	}
	return c.Seq
}
