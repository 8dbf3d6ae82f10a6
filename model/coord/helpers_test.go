package coord

import (
	"errors"
	"testing"

	"shardsim/model/bugs"
)

var (
	tenantA = TenantID{0xa1, 0xa2, 0xa3}
	tenantB = TenantID{0xb1, 0xb2, 0xb3}
)

const (
	run1 RunID    = 1
	w1   WorkerID = 0x1111
	w2   WorkerID = 0x2222
)

// backend is a Coordinator under test. The etcd backend adds itself here
// once it exists, so these tests check it against the same expectations.
type backend struct {
	name string
	make func(t testing.TB, cfg Config) Coordinator
}

var backends = []backend{
	{"reference", func(t testing.TB, cfg Config) Coordinator { return newRef(t, cfg) }},
	{"etcd", func(t testing.TB, cfg Config) Coordinator { return newEtcdDirect(t, cfg) }},
}

func newRef(t testing.TB, cfg Config) *Reference {
	t.Helper()
	r, err := NewReference(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func cfgWith(names ...string) Config {
	c := DefaultConfig()
	c.Bugs = bugs.MustParse(names...)
	return c
}

func spec(start, end string) ShardSpec {
	return ShardSpec{Start: bs(start), End: bs(end)}
}

func bs(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}

func cur(k string) Cursor { return Cursor{LastKey: bs(k)} }

// world is a coordinator with one active run of root shards 1..n, shard i
// covering [i*10, i*10+10) as two-digit keys ("10".."20", ...).
type world struct {
	t   testing.TB
	c   Coordinator
	now LogicalTime
}

func newWorld(t testing.TB, c Coordinator, roots ...InitialShard) *world {
	t.Helper()
	w := &world{t: t, c: c, now: 100}
	if len(roots) == 0 {
		roots = []InitialShard{{Shard: 1, Spec: spec("a", "m")}, {Shard: 2, Spec: spec("m", "")}}
	}
	if _, err := c.CreateRun(w.now, tenantA, run1, RunConfig{LeaseDuration: 10}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.RegisterShards(w.now, tenantA, run1, roots, 9000); err != nil {
		t.Fatal(err)
	}
	return w
}

func refWorld(t testing.TB, cfg Config, roots ...InitialShard) (*world, *Reference) {
	t.Helper()
	r := newRef(t, cfg)
	return newWorld(t, r, roots...), r
}

func (w *world) acquire(shard ShardID, worker WorkerID) Lease {
	w.t.Helper()
	res, _, err := w.c.AcquireAndRestore(w.now, tenantA, ShardKey{run1, shard}, worker)
	if err != nil {
		w.t.Fatalf("acquire %s by %s: %v", shard, worker, err)
	}
	return res.Lease
}

func (w *world) record(shard ShardID) ShardRecord {
	w.t.Helper()
	recs, err := w.c.Shards()
	if err != nil {
		w.t.Fatal(err)
	}
	for _, r := range recs {
		if r.Tenant == tenantA && r.Run == run1 && r.Shard == shard {
			return r
		}
	}
	w.t.Fatalf("no record for %s", shard)
	return ShardRecord{}
}

// checkAll asserts every stored record's invariants.
func (w *world) checkAll() {
	w.t.Helper()
	checkAllRecords(w.t, w.c)
}

func checkAllRecords(t testing.TB, c Coordinator) {
	t.Helper()
	recs, _ := c.Shards()
	for i := range recs {
		if err := recs[i].AssertInvariants(); err != nil {
			t.Fatalf("%s: %v", recs[i].Shard, err)
		}
	}
	runs, _ := c.Runs()
	for i := range runs {
		if err := runs[i].AssertInvariants(); err != nil {
			t.Fatalf("%s: %v", runs[i].Run, err)
		}
	}
}

func wantCode(t testing.TB, err error, code Code) {
	t.Helper()
	if code == codeNone {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if !errors.Is(err, code) {
		t.Fatalf("error = %v, want code %q", err, code)
	}
}
