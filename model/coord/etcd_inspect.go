package coord

import "shardsim/simkv"

// Shards implements Inspector by decoding every shard record.
func (e *Etcd) Shards() ([]ShardRecord, error) {
	s, err := e.Snapshot(0)
	return s.Shards, err
}

// Runs implements Inspector by decoding every run record.
func (e *Etcd) Runs() ([]RunRecord, error) {
	s, err := e.Snapshot(0)
	return s.Runs, err
}

// Snapshot decodes the whole namespace at one revision into a Snapshot
// observed at logical time at. Besides decoding, it checks what only the
// backend knows: every key parses, every record is stored under its own
// key, and the active-run index lists exactly the Active runs. A failure
// is a corruption error. (Owner bindings are returned for the checkers,
// which compare them with the records.)
func (e *Etcd) Snapshot(at LogicalTime) (Snapshot, error) {
	const label = "inspect"
	s := Snapshot{At: at}
	_, kvs, err := e.scan(label, e.keys.all(), 0)
	if err != nil {
		return Snapshot{}, err
	}
	var active []tenantRunKey
	for i := range kvs {
		if err := e.collect(&s, &active, &kvs[i]); err != nil {
			return Snapshot{}, err
		}
	}
	// Both lists are in key order, that is by tenant then run.
	var want []tenantRunKey
	for i := range s.Runs {
		if s.Runs[i].Status == RunActive {
			want = append(want, tenantRunKey{s.Runs[i].Tenant, s.Runs[i].Run})
		}
	}
	if len(want) != len(active) {
		return Snapshot{}, corrupt(label, "active-run index holds %d entries for %d Active runs", len(active), len(want))
	}
	for i := range want {
		if want[i] != active[i] {
			return Snapshot{}, corrupt(label, "active-run index disagrees with run %s", want[i].Run)
		}
	}
	return s, nil
}

// collect decodes one key-value of the namespace into s.
func (e *Etcd) collect(s *Snapshot, active *[]tenantRunKey, kv *simkv.KeyValue) error {
	const label = "inspect"
	k, err := ParseEtcdKey(e.cfg.Namespace, kv.Key)
	if err != nil {
		return corrupt(label, "%v", err)
	}
	switch k.Kind {
	case KeyRun:
		r, err := e.decodeRun(label, k.Tenant, k.Run, kv.Value)
		if err != nil {
			return err
		}
		s.Runs = append(s.Runs, r)
	case KeyActiveRun:
		if _, err := e.activeEntry(label, k.Tenant, kv); err != nil {
			return err
		}
		*active = append(*active, tenantRunKey{k.Tenant, k.Run})
	case KeyShard:
		r, err := e.decodeShard(label, k.Tenant, ShardKey{Run: k.Run, Shard: k.Shard}, kv.Value)
		if err != nil {
			return err
		}
		s.Shards = append(s.Shards, r)
	case KeyOwner:
		b, err := DecodeOwnerBinding(kv.Value)
		if err != nil {
			return corrupt(label, "owner binding of %s %s: %v", k.Run, k.Shard, err)
		}
		s.Bindings = append(s.Bindings, TenantBinding{Tenant: k.Tenant, Shard: ShardKey{Run: k.Run, Shard: k.Shard}, Binding: b})
	case KeyClaim:
		c, err := DecodeClaimRecord(kv.Value)
		if err != nil {
			return corrupt(label, "claim record of %s: %v", k.Worker, err)
		}
		if c.Worker != k.Worker {
			return corrupt(label, "claim record of %s names %s", k.Worker, c.Worker)
		}
		s.Claims = append(s.Claims, TenantClaim{Tenant: k.Tenant, Claim: c})
	}
	return nil
}
