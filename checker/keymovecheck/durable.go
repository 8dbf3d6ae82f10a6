package keymovecheck

import (
	"shardsim/property"
	"strings"

	"shardsim/model/keymove"
	"shardsim/simclock"
	"shardsim/simkv"
)

// Config describes the world a Durable checker watches.
type Config struct {
	Plan   keymove.Plan
	Keys   keymove.Keyspace
	Meta   *simkv.Store
	Shards map[keymove.ShardID]*simkv.Store
	// Force is the run's ForceSwapOnVerificationFailure.
	Force bool
	// IsClient tells client actors (whose writes are the value oracle) from
	// the executor.
	IsClient func(actor string) bool
}

// Durable checks KM.SingleSwap, KM.NoDualMapping and KM.VerifiedBeforeSwap
// after every apply, and keeps the oracle the final checks use.
type Durable struct {
	cfg     Config
	owner   map[string]keymove.ShardID   // current shard map
	mapped  map[string][]keymove.ShardID // every shard each key was mapped to
	changes map[string]int
	initial map[string]string // bootstrap value of keys that had one
	writes  map[string][]Applied
	ck      *keymove.Checkpoint
	ckpts   [][]byte // every checkpoint value that landed, in order
	sawVer  []bool   // a Verifying state was durable since the last copy
	okSwap  []bool   // ... followed by Verified or Swapping
	first   property.First

	// MapChanges and Checkpoints count what the checker saw.
	MapChanges, Checkpoints int
}

// Applied is one client write a shard applied.
type Applied struct {
	Value string
	At    simclock.Time
	Shard keymove.ShardID
}

// NewDurable snapshots the world's initial state (every key's map entry
// and the data of its owner) and returns the checker.
func NewDurable(cfg Config) *Durable {
	d := &Durable{cfg: cfg, owner: map[string]keymove.ShardID{}, mapped: map[string][]keymove.ShardID{},
		changes: map[string]int{}, initial: map[string]string{}, writes: map[string][]Applied{},
		sawVer: make([]bool, len(cfg.Plan.Moves)), okSwap: make([]bool, len(cfg.Plan.Moves))}
	start, end := cfg.Keys.MapRange()
	resp, _ := cfg.Meta.Apply(0, simkv.Request{Range: &simkv.RangeRequest{Key: start, RangeEnd: end}})
	for _, kv := range resp.Range.Kvs {
		k, _ := cfg.Keys.MapEntryKey(kv.Key)
		s := keymove.ShardID(kv.Value)
		d.owner[k], d.mapped[k] = s, []keymove.ShardID{s}
		if v, ok := d.get(s, keymove.DataKey(k)); ok {
			d.initial[k] = string(v.Value)
		}
	}
	return d
}

// Err returns the first violation seen.
func (d *Durable) Err() *property.Violation { return d.first.Err() }

func (d *Durable) report(v *property.Violation) { d.first.Set(v) }

// get reads one key of a shard store.
func (d *Durable) get(s keymove.ShardID, key []byte) (simkv.KeyValue, bool) {
	st := d.cfg.Shards[s]
	if st == nil {
		return simkv.KeyValue{}, false
	}
	resp, err := st.Apply(0, simkv.Request{Range: &simkv.RangeRequest{Key: key}})
	if err != nil || len(resp.Range.Kvs) != 1 {
		return simkv.KeyValue{}, false
	}
	return resp.Range.Kvs[0], true
}

// getAt reads one key of a shard store as of revision rev (> 0).
func (d *Durable) getAt(s keymove.ShardID, key []byte, rev int64) (simkv.KeyValue, bool) {
	st := d.cfg.Shards[s]
	if st == nil || rev <= 0 {
		return simkv.KeyValue{}, false
	}
	resp, err := st.Apply(0, simkv.Request{Range: &simkv.RangeRequest{Key: key, Revision: rev}})
	if err != nil || len(resp.Range.Kvs) != 1 {
		return simkv.KeyValue{}, false
	}
	return resp.Range.Kvs[0], true
}

// Latest is the oracle's value of key: its last applied client write, else
// its bootstrap value.
func (d *Durable) Latest(key string) (string, bool) {
	if w := d.writes[key]; len(w) > 0 {
		return w[len(w)-1].Value, true
	}
	v, ok := d.initial[key]
	return v, ok
}

// Writes returns the client writes of key the shards applied, in order.
func (d *Durable) Writes(key string) []Applied { return d.writes[key] }

// Initial returns key's bootstrap value.
func (d *Durable) Initial(key string) (string, bool) {
	v, ok := d.initial[key]
	return v, ok
}

// Owner returns key's current shard map entry.
func (d *Durable) Owner(key string) keymove.ShardID { return d.owner[key] }

// Checkpoints returns every checkpoint value that landed, in order.
func (d *Durable) CheckpointValues() [][]byte { return d.ckpts }

// LastCheckpoint returns the last checkpoint that landed.
func (d *Durable) LastCheckpoint() *keymove.Checkpoint { return d.ck }

// touched lists the user keys of a shard request's puts and deletes.
func touched(r simkv.Request) []string {
	var out []string
	var walk func(ops []simkv.RequestOp)
	add := func(k []byte) {
		s := string(k)
		for _, p := range []string{keymove.DataPrefix, keymove.CtlPrefix} {
			if u, ok := strings.CutPrefix(s, p); ok {
				out = append(out, u)
			}
		}
	}
	walk = func(ops []simkv.RequestOp) {
		for _, op := range ops {
			switch {
			case op.Put != nil:
				add(op.Put.Key)
			case op.DeleteRange != nil:
				add(op.DeleteRange.Key)
			case op.Txn != nil:
				walk(op.Txn.Success)
				walk(op.Txn.Failure)
			}
		}
	}
	switch {
	case r.Put != nil:
		add(r.Put.Key)
	case r.DeleteRange != nil:
		add(r.DeleteRange.Key)
	case r.Txn != nil:
		walk(r.Txn.Success)
		walk(r.Txn.Failure)
	}
	return out
}

// clientPut returns the data value a client's applied transaction wrote.
func clientPut(r simkv.Request, resp simkv.Response) (key, value string, ok bool) {
	if r.Txn == nil || resp.Txn == nil || !resp.Txn.Succeeded {
		return "", "", false
	}
	for _, op := range r.Txn.Success {
		if op.Put != nil {
			if k, found := strings.CutPrefix(string(op.Put.Key), keymove.DataPrefix); found {
				return k, string(op.Put.Value), true
			}
		}
	}
	return "", "", false
}
