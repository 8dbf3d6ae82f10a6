package coord

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"shardsim/simkv"
)

func TestEtcdKeysRoundTripAndOrder(t *testing.T) {
	ns := defaultEtcdNamespace
	keys := []EtcdKey{
		{Kind: KeyRun, Tenant: tenantA, Run: 7},
		{Kind: KeyActiveRun, Tenant: tenantB, Run: 1<<64 - 1},
		{Kind: KeyShard, Tenant: tenantA, Run: 1, Shard: 1 << 63},
		{Kind: KeyOwner, Tenant: tenantA, Run: 1, Shard: 2},
		{Kind: KeyClaim, Tenant: tenantB, Worker: w2},
	}
	for _, k := range keys {
		b := formatEtcdKey(ns, k)
		got, err := ParseEtcdKey(ns, b)
		if err != nil || got != k {
			t.Fatalf("%q: parsed %+v, %v", b, got, err)
		}
	}
	// Byte order of keys is id order, so scans list runs and shards in
	// the protocol's order.
	ks := keyspace{ns: ns}
	ids := []ShardID{0, 1, 0xff, 0x100, 1 << 62, 1<<63 | 5, 1<<64 - 1}
	for i := 0; i+1 < len(ids); i++ {
		a, b := ks.shard(tenantA, ShardKey{1, ids[i]}), ks.shard(tenantA, ShardKey{1, ids[i+1]})
		if bytes.Compare(a, b) >= 0 {
			t.Fatalf("%q sorts after %q", a, b)
		}
	}
	// Prefix ranges nest as intended.
	in := func(r keyRange, k []byte) bool { return bytes.Compare(k, r.Start) >= 0 && bytes.Compare(k, r.End) < 0 }
	sk := ks.shard(tenantA, ShardKey{2, 9})
	for _, r := range []keyRange{ks.runShards(tenantA, 2), ks.tenantShards(tenantA), ks.allShards(), ks.all()} {
		if !in(r, sk) {
			t.Fatalf("%q not in [%q, %q)", sk, r.Start, r.End)
		}
	}
	for _, r := range []keyRange{ks.runShards(tenantA, 3), ks.tenantShards(tenantB), ks.tenantActive(tenantA)} {
		if in(r, sk) {
			t.Fatalf("%q in [%q, %q)", sk, r.Start, r.End)
		}
	}
	if in(ks.allShards(), ks.owner(tenantA, ShardKey{2, 9})) {
		t.Fatal("owner key counted among shard records")
	}
}

func TestParseEtcdKeyRejects(t *testing.T) {
	ns := defaultEtcdNamespace
	good := string(formatEtcdKey(ns, EtcdKey{Kind: KeyShard, Tenant: tenantA, Run: 1, Shard: 2}))
	for _, bad := range []string{
		"", "/other/s/", ns, ns + "s", ns + "x/" + good[len(ns)+2:],
		good[:len(good)-1], good + "0", good[:len(good)-1] + "G", good[:len(good)-1] + "A",
		ns + "r" + good[len(ns)+1:], // a run key with two ids
	} {
		var ke *KeyError
		if _, err := ParseEtcdKey(ns, []byte(bad)); !errors.As(err, &ke) {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
}

func TestPrefixEnd(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a/", "a0"}, {"a\xff", "b"}, {"\xff\xff", "\x00"},
	} {
		if got := string(prefixEnd([]byte(tc.in))); got != tc.want {
			t.Errorf("prefixEnd(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestEtcdConfigValidate(t *testing.T) {
	if err := DefaultEtcdConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*EtcdConfig){
		"namespace without slash": func(c *EtcdConfig) { c.Namespace = "/x" },
		"one child":               func(c *EtcdConfig) { c.MaxChildrenPerOp = 1 },
		"children beyond txn ops": func(c *EtcdConfig) { c.MaxTxnOps = 11 },
		"inverted backoff":        func(c *EtcdConfig) { c.BackoffMax = time.Nanosecond; c.BackoffBase = time.Second },
		"protocol config":         func(c *EtcdConfig) { c.DefaultLeaseDuration = 0 },
	} {
		c := DefaultEtcdConfig()
		mut(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// The default cap of 8 children needs 13 compares and 10 ops: well
	// inside etcd's default of 128.
	if c, o := splitReplaceTxnSize(defaultEtcdMaxChildrenPerOp); c != 13 || o != 10 || max(c, o) > simkv.DefaultMaxTxnOps {
		t.Fatalf("split_replace of 8: %d compares, %d ops", c, o)
	}
}

func TestOwnerLeaseTTL(t *testing.T) {
	c := DefaultEtcdConfig()
	for _, tc := range []struct {
		unit, slack time.Duration
		d           LogicalDuration
		want        int64
	}{
		{time.Second, time.Second, 10, 11},
		{time.Second, 0, 10, 11},               // zero slack means the default, 1s
		{time.Millisecond, time.Second, 10, 2}, // 1.01s rounds up
		{time.Millisecond, 1, 1500, 2},
		{time.Second, time.Second, 1 << 50, simkv.MaxLeaseTTL},
		{time.Second, time.Second, 1<<64 - 1, simkv.MaxLeaseTTL},
	} {
		c.TimeUnit, c.LeaseSlack = tc.unit, tc.slack
		if got := c.OwnerLeaseTTL(tc.d); got != tc.want {
			t.Errorf("unit %v slack %v d %d: ttl %d, want %d", tc.unit, tc.slack, tc.d, got, tc.want)
		}
	}
}

// FuzzParseEtcdKey: parsing never panics, and every accepted key formats
// back to itself.
func FuzzParseEtcdKey(f *testing.F) {
	ns := defaultEtcdNamespace
	for _, k := range []EtcdKey{
		{Kind: KeyRun, Tenant: tenantA, Run: 1},
		{Kind: KeyShard, Tenant: tenantB, Run: 2, Shard: 1<<63 | 3},
		{Kind: KeyClaim, Tenant: tenantA, Worker: w1},
	} {
		f.Add(formatEtcdKey(ns, k))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		k, err := ParseEtcdKey(ns, in)
		if err != nil {
			return
		}
		if out := formatEtcdKey(ns, k); !bytes.Equal(out, in) {
			t.Fatalf("round trip:\n in %q\nout %q", in, out)
		}
	})
}

// FuzzDecodeActiveRunEntry: decoding never panics, and an accepted entry
// re-encodes to exactly the input.
func FuzzDecodeActiveRunEntry(f *testing.F) {
	f.Add(EncodeActiveRunEntry(&ActiveRunEntry{Run: 7}))
	f.Fuzz(func(t *testing.T, in []byte) {
		a, err := DecodeActiveRunEntry(in)
		if err != nil {
			return
		}
		if out := EncodeActiveRunEntry(&a); !bytes.Equal(out, in) {
			t.Fatalf("re-encoding differs:\n in %x\nout %x", in, out)
		}
	})
}

func TestDecodeActiveRunEntryRejects(t *testing.T) {
	good := EncodeActiveRunEntry(&ActiveRunEntry{Run: 3})
	for name, in := range map[string][]byte{
		"empty":    nil,
		"tag":      append([]byte{'R'}, good[1:]...),
		"version":  append([]byte{good[0], 9}, good[2:]...),
		"short":    good[:len(good)-1],
		"trailing": append(append([]byte(nil), good...), 0),
	} {
		var de *DecodeError
		if _, err := DecodeActiveRunEntry(in); !errors.As(err, &de) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}
