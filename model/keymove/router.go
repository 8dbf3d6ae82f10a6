package keymove

import (
	"errors"
	"time"

	"shardsim/simkv"
)

// Router is a client of the sharded store: it routes each key by the shard
// map it last read and reads or writes the key's data on that shard. A
// shard refuses a key it does not serve (its control word is not CtlOpen);
// the router then re-reads the key's map entry and tries again.
type Router struct {
	Meta   simkv.KV
	Shard  func(ShardID) simkv.KV
	Keys   Keyspace
	Tries  int           // attempts per operation (default 4)
	Pause  time.Duration // wait before re-routing (default 20ms)
	routes map[string]ShardID
}

// ErrMoved: every attempt found the key served elsewhere; nothing was
// written.
var ErrMoved = errors.New("keymove: key kept moving; operation not applied")

// Refresh reads the whole shard map.
func (r *Router) Refresh() error {
	start, end := r.Keys.MapRange()
	resp, err := r.Meta.Range(simkv.RangeRequest{Key: start, RangeEnd: end})
	if err != nil {
		return err
	}
	r.routes = make(map[string]ShardID, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		if k, ok := r.Keys.MapEntryKey(kv.Key); ok {
			r.routes[k] = ShardID(kv.Value)
		}
	}
	return nil
}

// Route returns the shard the router believes owns key ("" if unknown).
func (r *Router) Route(key string) ShardID { return r.routes[key] }

// refreshKey re-reads one map entry.
func (r *Router) refreshKey(key string) error {
	resp, err := r.Meta.Range(simkv.RangeRequest{Key: r.Keys.MapKey(key)})
	if err != nil {
		return err
	}
	if r.routes == nil {
		r.routes = map[string]ShardID{}
	}
	if len(resp.Kvs) == 1 {
		r.routes[key] = ShardID(resp.Kvs[0].Value)
	}
	return nil
}

// Outcome is what a routed operation did.
type Outcome struct {
	Shard ShardID // the shard that answered
	Found bool    // a read found data
	Value []byte  // a read's value
}

// Write puts value under key on the shard the router believes owns it, if
// that shard serves the key. A transport error is returned as is (the
// write may or may not have landed: simkv.IsIndeterminate tells).
func (r *Router) Write(key string, value []byte) (Outcome, error) {
	return r.do(key, []simkv.RequestOp{{Put: &simkv.PutRequest{Key: DataKey(key), Value: value}}})
}

// Read reads key from the shard the router believes owns it, if that shard
// serves the key.
func (r *Router) Read(key string) (Outcome, error) {
	return r.do(key, []simkv.RequestOp{{Range: &simkv.RangeRequest{Key: DataKey(key)}}})
}

func (r *Router) do(key string, ops []simkv.RequestOp) (Outcome, error) {
	tries, pause := r.Tries, r.Pause
	if tries <= 0 {
		tries = 4
	}
	if pause <= 0 {
		pause = 20 * time.Millisecond
	}
	for n := 0; n < tries; n++ {
		if n > 0 {
			r.Meta.Sleep(pause)
			if err := r.refreshKey(key); err != nil {
				return Outcome{}, err
			}
		}
		shard := r.routes[key]
		resp, err := r.Shard(shard).Txn(simkv.TxnRequest{
			Compare: []simkv.Compare{{Target: simkv.CompareValue, Result: simkv.CompareEqual, Key: CtlKey(key), Value: []byte(CtlOpen)}},
			Success: ops,
		})
		if err != nil {
			return Outcome{Shard: shard}, err
		}
		if !resp.Succeeded {
			continue
		}
		out := Outcome{Shard: shard}
		if rr := resp.Responses[0].Range; rr != nil && len(rr.Kvs) == 1 {
			out.Found, out.Value = true, rr.Kvs[0].Value
		}
		return out, nil
	}
	return Outcome{}, ErrMoved
}
