package coord

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestConfigValidate(t *testing.T) {
	for _, mut := range []func(*Config){
		func(c *Config) { c.DefaultLeaseDuration = 0 },
		func(c *Config) { c.Limits.MaxPerTenant = 0 },
		func(c *Config) { c.Limits.MaxTotal = -1 },
	} {
		c := DefaultConfig()
		mut(&c)
		if _, err := NewReference(c); err == nil {
			t.Errorf("accepted %+v", c)
		}
	}
}

func TestReferenceClone(t *testing.T) {
	w, r := refWorld(t, DefaultConfig())
	l := w.acquire(1, w1)
	if _, _, err := r.Checkpoint(w.now, tenantA, l, cur("c"), 1); err != nil {
		t.Fatal(err)
	}
	c := r.Clone()
	before, _ := r.Shards()
	if _, _, err := c.SplitReplace(w.now, tenantA, l, SplitReplacePlan{[]ShardSpec{spec("a", "f"), spec("f", "m")}}, 2); err != nil {
		t.Fatal(err)
	}
	after, _ := r.Shards()
	if d := cmp.Diff(before, after); d != "" {
		t.Fatalf("changing the clone changed the original:\n%s", d)
	}
	cs, _ := c.Shards()
	if len(cs) != len(before)+2 {
		t.Fatalf("clone has %d shards", len(cs))
	}
}

// TestDeterministic runs one script twice and compares every event
// rendering and every stored record's encoding byte for byte.
func TestDeterministic(t *testing.T) {
	trace := func() []byte {
		r := newRef(t, DefaultConfig())
		var out bytes.Buffer
		log := func(_ any, evs []Event, err error) {
			for _, e := range evs {
				out.WriteString(e.String() + "\n")
			}
			if err != nil {
				out.WriteString(err.Error() + "\n")
			}
		}
		for _, tn := range []TenantID{tenantB, tenantA} {
			log(createRunWithShards(r, 1, tn, 2, RunConfig{}, []InitialShard{{9, spec("", "k")}, {4, spec("k", "")}}, 1))
			log(createRunWithShards(r, 1, tn, 1, RunConfig{}, []InitialShard{{1, spec("", "")}}, 1))
		}
		for i := 0; i < 6; i++ {
			res, evs, err := r.ClaimNextAvailable(LogicalTime(2+i), tenantA, WorkerID(i%2))
			log(nil, evs, err)
			if err == nil {
				log(r.SplitResidual(LogicalTime(2+i), tenantA, res.Lease, SplitResidualPlan{
					ShardSpec{Start: res.Snapshot.Spec.Start, End: append(bytes.Clone(res.Snapshot.Spec.Start), 'm')},
					ShardSpec{Start: append(bytes.Clone(res.Snapshot.Spec.Start), 'm'), End: res.Snapshot.Spec.End},
				}, OpID(10+i)))
			}
		}
		shards, _ := r.Shards()
		for i := range shards {
			out.Write(EncodeShardRecord(&shards[i]))
		}
		runs, _ := r.Runs()
		for i := range runs {
			out.Write(EncodeRunRecord(&runs[i]))
		}
		return out.Bytes()
	}
	a, b := trace(), trace()
	if !bytes.Equal(a, b) {
		t.Fatal("two runs of the same script differ")
	}
}

func TestInfraErrorUnwrap(t *testing.T) {
	infra := &InfraError{Operation: "renew.txn", Message: "codec"}
	err := BackendError(OpRenew, infra)
	var got *InfraError
	if !errors.As(err, &got) || got != infra || !errors.Is(err, CodeBackendCorruption) {
		t.Fatalf("unwrap: %v", err)
	}
	var re *RenewError
	if !errors.As(err, &re) {
		t.Fatal("not a RenewError")
	}
}
