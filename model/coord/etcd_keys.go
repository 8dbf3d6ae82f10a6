package coord

import (
	"encoding/hex"
	"fmt"
	"strconv"
)

// The etcd keyspace. Every key is the namespace, a one-letter kind, and
// fixed-width lower-case hex ids separated by '/':
//
//	<ns>r/<tenant>/<run>            run record         (RunRecord)
//	<ns>a/<tenant>/<run>            active-run index   (ActiveRunEntry), present iff the run is Active
//	<ns>s/<tenant>/<run>/<shard>    shard record       (ShardRecord)
//	<ns>o/<tenant>/<run>/<shard>    owner binding      (OwnerBinding), under an etcd lease
//	<ns>c/<tenant>/<worker>         claim record       (ClaimRecord)
//
// with <tenant> 64 hex digits and <run>, <shard>, <worker> 16. A run or
// shard record's value is its encoding followed by the write stamp of the
// attempt that wrote it (etcd_readback.go). Fixed width
// makes byte order equal id order, so a prefix scan returns runs and shards
// in the order the protocol lists them, and a tenant's shard records (and
// all shard records) are one contiguous range that a count-only range or a
// range compare can cover.

// KeyKind is the kind of record a key names.
type KeyKind byte

// The key kinds, by their letter in the key.
const (
	KeyRun       KeyKind = 'r'
	KeyActiveRun KeyKind = 'a'
	KeyShard     KeyKind = 's'
	KeyOwner     KeyKind = 'o'
	KeyClaim     KeyKind = 'c'
)

// String names the kind.
func (k KeyKind) String() string {
	switch k {
	case KeyRun:
		return "run"
	case KeyActiveRun:
		return "active-run"
	case KeyShard:
		return "shard"
	case KeyOwner:
		return "owner"
	case KeyClaim:
		return "claim"
	}
	return "key-kind(?)"
}

// EtcdKey is a parsed key. Kind says which ids are meaningful: Run for run
// and active-run keys, Run and Shard for shard and owner keys, Worker for
// claim keys; the others are zero.
type EtcdKey struct {
	Kind   KeyKind
	Tenant TenantID
	Run    RunID
	Shard  ShardID
	Worker WorkerID
}

// keyspace builds the keys of one namespace. With a cache (the backend's
// own keyspace), a record's key is built once and handed out again: a key
// is read, never written, by everything it goes to (requests, compares,
// the store, which copies what it keeps), and its capacity is its length,
// so a caller that appends to one gets a copy.
type keyspace struct {
	ns    string
	cache map[recordKeyID][]byte // nil: build every time
}

// recordKeyID names one record's key within a namespace.
type recordKeyID struct {
	kind   KeyKind
	tenant TenantID
	a, b   uint64
}

func newKeyspace(ns string) keyspace {
	return keyspace{ns: ns, cache: map[recordKeyID][]byte{}}
}

// record returns the key of a record named by kind, tenant and one or two
// ids (b is used when two is set).
func (k keyspace) record(kind KeyKind, tenant TenantID, a, b uint64, two bool) []byte {
	id := recordKeyID{kind: kind, tenant: tenant, a: a, b: b}
	if key, ok := k.cache[id]; ok {
		return key
	}
	var key []byte
	if two {
		key = k.build(kind, tenant, a, b)
	} else {
		key = k.build(kind, tenant, a)
	}
	key = key[:len(key):len(key)]
	if k.cache != nil {
		k.cache[id] = key
	}
	return key
}

func (k keyspace) build(kind KeyKind, tenant TenantID, ids ...uint64) []byte {
	b := make([]byte, 0, len(k.ns)+2+64+len(ids)*17)
	b = append(b, k.ns...)
	b = append(b, byte(kind), '/')
	b = hex.AppendEncode(b, tenant[:])
	for _, id := range ids {
		b = append(b, '/')
		b = appendHex16(b, id)
	}
	return b
}

func appendHex16(b []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, digits[(v>>uint(shift))&0xf])
	}
	return b
}

func (k keyspace) run(t TenantID, r RunID) []byte { return k.record(KeyRun, t, uint64(r), 0, false) }
func (k keyspace) active(t TenantID, r RunID) []byte {
	return k.record(KeyActiveRun, t, uint64(r), 0, false)
}
func (k keyspace) shard(t TenantID, key ShardKey) []byte {
	return k.record(KeyShard, t, uint64(key.Run), uint64(key.Shard), true)
}
func (k keyspace) owner(t TenantID, key ShardKey) []byte {
	return k.record(KeyOwner, t, uint64(key.Run), uint64(key.Shard), true)
}
func (k keyspace) claim(t TenantID, w WorkerID) []byte {
	return k.record(KeyClaim, t, uint64(w), 0, false)
}

// keyRange is a half-open range of keys [Start, End).
type keyRange struct{ Start, End []byte }

// prefixRange returns the range of every key starting with p.
func prefixRange(p []byte) keyRange { return keyRange{Start: p, End: prefixEnd(p)} }

// prefixEnd returns the smallest key above every key with prefix p, as
// etcd clients compute a prefix's range end.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return []byte{0} // every key from p on
}

func (k keyspace) kindPrefix(kind KeyKind) []byte {
	return append(append([]byte(k.ns), byte(kind)), '/')
}

func (k keyspace) tenantPrefix(kind KeyKind, t TenantID) []byte {
	return append(hex.AppendEncode(k.kindPrefix(kind), t[:]), '/')
}

// allShards covers every shard record of every tenant.
func (k keyspace) allShards() keyRange { return prefixRange(k.kindPrefix(KeyShard)) }

// tenantShards covers the shard records of one tenant.
func (k keyspace) tenantShards(t TenantID) keyRange {
	return prefixRange(k.tenantPrefix(KeyShard, t))
}

// runShards covers the shard records of one run.
func (k keyspace) runShards(t TenantID, r RunID) keyRange {
	return prefixRange(append(k.build(KeyShard, t, uint64(r)), '/'))
}

// tenantActive covers the active-run index entries of one tenant.
func (k keyspace) tenantActive(t TenantID) keyRange {
	return prefixRange(k.tenantPrefix(KeyActiveRun, t))
}

// all covers the whole namespace.
func (k keyspace) all() keyRange { return prefixRange([]byte(k.ns)) }

// formatEtcdKey returns the key of k in namespace ns.
func formatEtcdKey(ns string, k EtcdKey) []byte {
	ks := keyspace{ns: ns}
	switch k.Kind {
	case KeyRun:
		return ks.run(k.Tenant, k.Run)
	case KeyActiveRun:
		return ks.active(k.Tenant, k.Run)
	case KeyShard:
		return ks.shard(k.Tenant, ShardKey{k.Run, k.Shard})
	case KeyOwner:
		return ks.owner(k.Tenant, ShardKey{k.Run, k.Shard})
	case KeyClaim:
		return ks.claim(k.Tenant, k.Worker)
	}
	panic("coord: formatEtcdKey of unknown kind " + strconv.Itoa(int(k.Kind)))
}

// KeyError reports a key that is not in the backend's format.
type KeyError struct {
	Key    string // quoted for display
	Detail string
}

// Error describes the failure.
func (e *KeyError) Error() string { return fmt.Sprintf("coord: malformed key %s: %s", e.Key, e.Detail) }

// ParseEtcdKey parses a key of namespace ns. It accepts exactly the keys
// formatEtcdKey produces, so parsing and formatting round-trip.
func ParseEtcdKey(ns string, key []byte) (EtcdKey, error) {
	bad := func(detail string) (EtcdKey, error) {
		return EtcdKey{}, &KeyError{Key: strconv.Quote(string(key)), Detail: detail}
	}
	if len(key) < len(ns) || string(key[:len(ns)]) != ns {
		return bad("outside the namespace")
	}
	rest := key[len(ns):]
	if len(rest) < 2 || rest[1] != '/' {
		return bad("no kind")
	}
	k := EtcdKey{Kind: KeyKind(rest[0])}
	var ids int
	switch k.Kind {
	case KeyRun, KeyActiveRun, KeyClaim:
		ids = 1
	case KeyShard, KeyOwner:
		ids = 2
	default:
		return bad("unknown kind")
	}
	rest = rest[2:]
	if len(rest) != 64+ids*17 {
		return bad("wrong length")
	}
	if !lowerHex(rest[:64]) {
		return bad("tenant is not lower-case hex")
	}
	hex.Decode(k.Tenant[:], rest[:64])
	var vals [2]uint64
	for i := 0; i < ids; i++ {
		field := rest[64+i*17:]
		if field[0] != '/' || !lowerHex(field[1:17]) {
			return bad("id is not 16 lower-case hex digits")
		}
		vals[i], _ = strconv.ParseUint(string(field[1:17]), 16, 64)
	}
	switch k.Kind {
	case KeyRun, KeyActiveRun:
		k.Run = RunID(vals[0])
	case KeyClaim:
		k.Worker = WorkerID(vals[0])
	default:
		k.Run, k.Shard = RunID(vals[0]), ShardID(vals[1])
	}
	return k, nil
}

func lowerHex(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
