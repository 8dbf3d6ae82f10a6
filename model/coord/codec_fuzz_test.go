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

// record is a pointer to a stored record type with its invariants.
type record[R any] interface {
	*R
	AssertInvariants() error
}

// checkRecordDecoders is the property both record fuzz targets check on
// one input: the checked decoder accepts exactly what the unchecked one
// accepts and finds valid, and what it accepts is valid and re-encodes to
// the input.
func checkRecordDecoders[R any, P record[R]](t *testing.T, in []byte, unchecked, checked func([]byte) (R, error), encode func(*R) []byte) {
	loose, lerr := unchecked(in)
	r, err := checked(in)
	if err != nil {
		if lerr == nil && P(&loose).AssertInvariants() == nil {
			t.Fatalf("checked decode refused a valid record: %v", err)
		}
		return
	}
	if lerr != nil {
		t.Fatalf("unchecked decode refused what checked accepted: %v", lerr)
	}
	if err := P(&r).AssertInvariants(); err != nil {
		t.Fatalf("accepted record breaks invariants: %v", err)
	}
	if out := encode(&r); !bytes.Equal(out, in) {
		t.Fatalf("re-encoding differs:\n in %x\nout %x", in, out)
	}
}

func FuzzDecodeShardRecord(f *testing.F) {
	r := validRecord()
	f.Add(EncodeShardRecord(&r))
	f.Fuzz(func(t *testing.T, in []byte) {
		checkRecordDecoders(t, in, DecodeShardRecordUnchecked, decodeShardRecord, EncodeShardRecord)
	})
}

func FuzzDecodeRunRecord(f *testing.F) {
	r := RunRecord{Tenant: tenantA, Run: run1, Config: RunConfig{LeaseDuration: 5}, Status: RunActive, RootShards: []ShardID{1}}
	f.Add(EncodeRunRecord(&r))
	f.Fuzz(func(t *testing.T, in []byte) {
		checkRecordDecoders(t, in, DecodeRunRecordUnchecked, decodeRunRecord, EncodeRunRecord)
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
