package coord

import (
	"bytes"
	"testing"
)

// The fuzz targets check that decoders never panic, that anything a
// decoder accepts satisfies its invariants and re-encodes to exactly the
// input (the encoding is canonical), and that the unchecked decoders
// accept a superset of the checked ones. Seed inputs live in
// testdata/fuzz/<FuzzName>/ so plain `go test` replays them.

func FuzzDecodeShardRecord(f *testing.F) {
	r := validRecord()
	f.Add(EncodeShardRecord(&r))
	f.Fuzz(func(t *testing.T, in []byte) {
		loose, lerr := DecodeShardRecordUnchecked(in)
		r, err := decodeShardRecord(in)
		if err != nil {
			if lerr == nil && loose.AssertInvariants() == nil {
				t.Fatalf("checked decode refused a valid record: %v", err)
			}
			return
		}
		if lerr != nil {
			t.Fatalf("unchecked decode refused what checked accepted: %v", lerr)
		}
		if err := r.AssertInvariants(); err != nil {
			t.Fatalf("accepted record breaks invariants: %v", err)
		}
		if out := EncodeShardRecord(&r); !bytes.Equal(out, in) {
			t.Fatalf("re-encoding differs:\n in %x\nout %x", in, out)
		}
	})
}

func FuzzDecodeRunRecord(f *testing.F) {
	r := RunRecord{Tenant: tenantA, Run: run1, Config: RunConfig{LeaseDuration: 5}, Status: RunActive, RootShards: []ShardID{1}}
	f.Add(EncodeRunRecord(&r))
	f.Fuzz(func(t *testing.T, in []byte) {
		loose, lerr := DecodeRunRecordUnchecked(in)
		r, err := decodeRunRecord(in)
		if err != nil {
			if lerr == nil && loose.AssertInvariants() == nil {
				t.Fatalf("checked decode refused a valid record: %v", err)
			}
			return
		}
		if lerr != nil {
			t.Fatalf("unchecked decode refused what checked accepted: %v", lerr)
		}
		if err := r.AssertInvariants(); err != nil {
			t.Fatalf("accepted record breaks invariants: %v", err)
		}
		if out := EncodeRunRecord(&r); !bytes.Equal(out, in) {
			t.Fatalf("re-encoding differs:\n in %x\nout %x", in, out)
		}
	})
}

func FuzzDecodeOwnerBinding(f *testing.F) {
	f.Add(EncodeOwnerBinding(&OwnerBinding{Worker: w1, Fence: 2, Deadline: 30}))
	f.Fuzz(func(t *testing.T, in []byte) {
		o, err := DecodeOwnerBinding(in)
		if err != nil {
			return
		}
		if err := o.AssertInvariants(); err != nil {
			t.Fatalf("accepted binding breaks invariants: %v", err)
		}
		if out := EncodeOwnerBinding(&o); !bytes.Equal(out, in) {
			t.Fatalf("re-encoding differs:\n in %x\nout %x", in, out)
		}
	})
}

func FuzzDecodeClaimRecord(f *testing.F) {
	f.Add(EncodeClaimRecord(&ClaimRecord{Worker: w1, LastClaimAt: 7}))
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := DecodeClaimRecord(in)
		if err != nil {
			return
		}
		if out := EncodeClaimRecord(&c); !bytes.Equal(out, in) {
			t.Fatalf("re-encoding differs:\n in %x\nout %x", in, out)
		}
	})
}
