package coord

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// Generators of valid records.

func genBytes(min, max int) *rapid.Generator[[]byte] {
	return rapid.Map(rapid.SliceOfN(rapid.ByteRange('a', 'f'), min, max), cloneBytes)
}

func genSpec() *rapid.Generator[ShardSpec] {
	return rapid.Custom(func(t *rapid.T) ShardSpec {
		a := genBytes(0, 4).Draw(t, "a")
		b := genBytes(1, 4).Draw(t, "b")
		if bytes.Compare(a, b) > 0 {
			a, b = b, a
		}
		if bytes.Equal(a, b) {
			b = append(bytes.Clone(b), 'z')
		}
		if rapid.Bool().Draw(t, "unbounded") {
			b = nil
		}
		return ShardSpec{Start: a, End: b, Metadata: genBytes(0, 6).Draw(t, "meta")}
	})
}

func genOpLog(t *rapid.T, max int, kinds []OpKind) []OpLogEntry {
	ops := rapid.SliceOfNDistinct(rapid.Uint64(), 0, max, func(v uint64) uint64 { return v }).Draw(t, "ops")
	out := make([]OpLogEntry, len(ops))
	for i, op := range ops {
		out[i] = OpLogEntry{
			Op:          OpID(op),
			Kind:        rapid.SampledFrom(kinds).Draw(t, "kind"),
			Result:      OpResult(rapid.Uint8Range(0, 2).Draw(t, "result")),
			PayloadHash: rapid.Uint64().Draw(t, "hash"),
			ExecutedAt:  LogicalTime(rapid.Uint64().Draw(t, "at")),
		}
		if out[i].Result == OpError {
			out[i].Refusal = Code(rapid.IntRange(1, int(codeEnd)-1).Draw(t, "refusal"))
		}
	}
	return out
}

var (
	shardKinds = []OpKind{OpKindCheckpoint, OpKindComplete, OpKindPark, OpKindSplitReplace, OpKindSplitResidual, OpKindUnpark}
	runKinds   = []OpKind{OpKindRegisterShards, OpKindCompleteRun, OpKindFailRun, OpKindCancelRun}
)

func genTenant(t *rapid.T) TenantID {
	var tn TenantID
	copy(tn[:], rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "tenant"))
	return tn
}

func genShardRecord() *rapid.Generator[ShardRecord] {
	return rapid.Custom(func(t *rapid.T) ShardRecord {
		r := ShardRecord{
			Tenant:    genTenant(t),
			Run:       RunID(rapid.Uint64().Draw(t, "run")),
			Shard:     ShardID(rapid.Uint64().Draw(t, "shard")),
			Spec:      genSpec().Draw(t, "spec"),
			Status:    ShardStatus(rapid.Uint8Range(0, 3).Draw(t, "status")),
			Fence:     FenceEpoch(rapid.Uint64Min(1).Draw(t, "fence")),
			Semantics: CursorSemantics(rapid.Uint8Range(0, 1).Draw(t, "semantics")),
		}
		if r.Shard.IsDerived() {
			r.Parent = Some(ShardID(rapid.Uint64().Draw(t, "parent")))
		}
		switch r.Status {
		case ShardActive:
			if rapid.Bool().Draw(t, "leased") {
				r.Lease = Some(LeaseHolder{Owner: WorkerID(rapid.Uint64().Draw(t, "owner")), Deadline: LogicalTime(rapid.Uint64().Draw(t, "deadline"))})
			}
		case ShardParked:
			r.ParkReason = Some(ParkReason(rapid.Uint8Range(0, 4).Draw(t, "reason")))
		}
		r.Cursor = Cursor{LastKey: genBytes(0, 5).Draw(t, "last"), Token: genBytes(0, 5).Draw(t, "token")}
		minSpawned := 0
		if r.Status == ShardSplit {
			minSpawned = 1
		}
		for _, id := range rapid.SliceOfN(rapid.Uint64(), minSpawned, 6).Draw(t, "spawned") {
			r.Spawned = append(r.Spawned, ShardID(id)|derivedBit)
		}
		r.OpLog = newShardOpLog(genOpLog(t, shardOpLogCap, shardKinds)...)
		return r
	})
}

func genRunRecord() *rapid.Generator[RunRecord] {
	return rapid.Custom(func(t *rapid.T) RunRecord {
		r := RunRecord{
			Tenant: genTenant(t),
			Run:    RunID(rapid.Uint64().Draw(t, "run")),
			Status: RunStatus(rapid.Uint8Range(0, 4).Draw(t, "status")),
			Config: RunConfig{
				Semantics:       CursorSemantics(rapid.Uint8Range(0, 1).Draw(t, "semantics")),
				LeaseDuration:   LogicalDuration(rapid.Uint64Min(1).Draw(t, "lease")),
				MaxShardRetries: rapid.Uint32().Draw(t, "retries"),
			},
			CreatedAt: LogicalTime(rapid.Uint64Max(1<<62).Draw(t, "created")),
		}
		if r.Status.Terminal() {
			r.CompletedAt = Some(r.CreatedAt + LogicalTime(rapid.Uint64Max(1<<62).Draw(t, "elapsed")))
		}
		hasRoots := r.Status == RunActive || r.Status == RunDone || r.Status == RunFailed ||
			(r.Status == RunCancelled && rapid.Bool().Draw(t, "cancelled after activation"))
		if hasRoots {
			for _, id := range rapid.SliceOfNDistinct(rapid.Uint64Max(1<<63-1), 1, 8, func(v uint64) uint64 { return v }).Draw(t, "roots") {
				r.RootShards = append(r.RootShards, ShardID(id))
			}
		}
		r.OpLog = newRunOpLog(genOpLog(t, runOpLogCap, runKinds)...)
		return r
	})
}

func TestShardRecordRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := genShardRecord().Draw(t, "record")
		if err := r.AssertInvariants(); err != nil {
			t.Fatalf("generator made an invalid record: %v", err)
		}
		enc := EncodeShardRecord(&r)
		if len(enc) != shardRecordSize(&r) || len(enc) != cap(enc) {
			t.Fatalf("encoding of %d bytes (room for %d), shardRecordSize says %d", len(enc), cap(enc), shardRecordSize(&r))
		}
		got, err := decodeShardRecord(enc)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(r, got); d != "" {
			t.Fatalf("round trip (-want +got):\n%s", d)
		}
		if !bytes.Equal(EncodeShardRecord(&got), enc) {
			t.Fatal("re-encoding differs")
		}
		checkPrefixesRejected(t, enc, func(b []byte) error { _, err := decodeShardRecord(b); return err })
	})
}

func TestRunRecordRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := genRunRecord().Draw(t, "record")
		if err := r.AssertInvariants(); err != nil {
			t.Fatalf("generator made an invalid record: %v", err)
		}
		enc := EncodeRunRecord(&r)
		if len(enc) != runRecordSize(&r) || len(enc) != cap(enc) {
			t.Fatalf("encoding of %d bytes (room for %d), runRecordSize says %d", len(enc), cap(enc), runRecordSize(&r))
		}
		got, err := decodeRunRecord(enc)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(r, got); d != "" {
			t.Fatalf("round trip (-want +got):\n%s", d)
		}
		checkPrefixesRejected(t, enc, func(b []byte) error { _, err := decodeRunRecord(b); return err })
	})
}

func TestSmallRecordsRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		o := OwnerBinding{Worker: WorkerID(rapid.Uint64().Draw(t, "w")), Fence: FenceEpoch(rapid.Uint64Min(1).Draw(t, "f")), Deadline: LogicalTime(rapid.Uint64().Draw(t, "d"))}
		enc := EncodeOwnerBinding(&o)
		if got, err := DecodeOwnerBinding(enc); err != nil || got != o {
			t.Fatalf("owner binding: %+v %v", got, err)
		}
		checkPrefixesRejected(t, enc, func(b []byte) error { _, err := DecodeOwnerBinding(b); return err })
		c := ClaimRecord{Worker: WorkerID(rapid.Uint64().Draw(t, "cw")), LastClaimAt: LogicalTime(rapid.Uint64().Draw(t, "at"))}
		enc = EncodeClaimRecord(&c)
		if got, err := DecodeClaimRecord(enc); err != nil || got != c {
			t.Fatalf("claim record: %+v %v", got, err)
		}
		checkPrefixesRejected(t, enc, func(b []byte) error { _, err := DecodeClaimRecord(b); return err })
	})
}

// checkPrefixesRejected checks that every proper prefix of a valid
// encoding, and the encoding with a byte appended, fail with a DecodeError.
func checkPrefixesRejected(t *rapid.T, enc []byte, decode func([]byte) error) {
	for n := 0; n < len(enc); n++ {
		var de *DecodeError
		if err := decode(enc[:n]); !errors.As(err, &de) || de.Kind != DecodeTruncated {
			t.Fatalf("prefix of %d/%d bytes: %v", n, len(enc), err)
		}
	}
	var de *DecodeError
	if err := decode(append(slices.Clone(enc), 0)); !errors.As(err, &de) || de.Kind != DecodeTrailingBytes {
		t.Fatalf("trailing byte: %v", err)
	}
}

func TestDecodeRejects(t *testing.T) {
	good := validRecord()
	good.Spawned = []ShardID{derivedBit | 5}
	enc := EncodeShardRecord(&good)
	// Offsets into the encoding of good.
	const (
		offStatus = 2 + 32 + 8 + 8
		offPark   = offStatus + 1
		offFence  = offPark + 1 + 1 + 16
	)
	set := func(off int, v byte) []byte { b := slices.Clone(enc); b[off] = v; return b }
	for _, tc := range []struct {
		name string
		in   []byte
		kind DecodeErrorKind
	}{
		{"empty", nil, DecodeTruncated},
		{"other record's tag", EncodeRunRecord(&RunRecord{}), DecodeBadTag},
		{"unknown version", set(1, CodecVersion+1), DecodeUnknownVersion},
		{"the previous version", set(1, CodecVersion-1), DecodeUnknownVersion},
		{"version zero", set(1, 0), DecodeUnknownVersion},
		{"status out of range", set(offStatus, 4), DecodeBadDiscriminant},
		{"flag not boolean", set(offPark, 2), DecodeBadValue},
		{"fence zero", func() []byte { b := slices.Clone(enc); clear(b[offFence : offFence+8]); return b }(), DecodeInvariant},
		{"park reason on active shard", func() []byte {
			r := good
			r.ParkReason = Some(ParkOther)
			return EncodeShardRecord(&r)
		}(), DecodeInvariant},
		{"huge length prefix", func() []byte {
			b := slices.Clone(enc[:offFence+8])
			return append(b, 0xff, 0xff, 0xff, 0xff)
		}(), DecodeTruncated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeShardRecord(tc.in)
			var de *DecodeError
			if !errors.As(err, &de) || de.Kind != tc.kind {
				t.Fatalf("got %v, want kind %v", err, tc.kind)
			}
		})
	}
	t.Run("unchecked skips only invariants", func(t *testing.T) {
		r := good
		r.Status = ShardDone // Done with a lease
		b := EncodeShardRecord(&r)
		if _, err := decodeShardRecord(b); err == nil {
			t.Fatal("checked decode accepted a leased Done shard")
		}
		got, err := DecodeShardRecordUnchecked(b)
		if err != nil || got.Status != ShardDone || !got.Lease.Set {
			t.Fatalf("unchecked: %+v %v", got, err)
		}
		if _, err := DecodeShardRecordUnchecked(set(offStatus, 9)); err == nil {
			t.Fatal("unchecked decode accepted a bad discriminant")
		}
	})
	t.Run("op-log count above capacity", func(t *testing.T) {
		run := RunRecord{Config: RunConfig{LeaseDuration: 1}}
		b := EncodeRunRecord(&run)
		b[len(b)-1] = runOpLogCap + 1
		var de *DecodeError
		if _, err := decodeRunRecord(b); !errors.As(err, &de) || de.Kind != DecodeBadValue {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("owner binding fence zero", func(t *testing.T) {
		var de *DecodeError
		if _, err := DecodeOwnerBinding(EncodeOwnerBinding(&OwnerBinding{})); !errors.As(err, &de) || de.Kind != DecodeInvariant {
			t.Fatalf("got %v", err)
		}
	})
}

func TestCodecOfReferenceState(t *testing.T) {
	// Everything the reference stores survives the codec unchanged.
	w, r := refWorld(t, DefaultConfig())
	l := w.acquire(1, w1)
	mustOK := func(_ any, _ []Event, err error) { t.Helper(); wantCode(t, err, codeNone) }
	mustOK(w.c.Checkpoint(w.now, tenantA, l, Cursor{LastKey: bs("c"), Token: bs("t")}, 1))
	mustOK(w.c.SplitResidual(w.now, tenantA, l, SplitResidualPlan{spec("a", "g"), spec("g", "m")}, 2))
	mustOK(w.c.SplitReplace(w.now, tenantA, l, SplitReplacePlan{[]ShardSpec{spec("a", "d"), spec("d", "g")}}, 3))
	shards, _ := r.Shards()
	for i := range shards {
		got, err := decodeShardRecord(EncodeShardRecord(&shards[i]))
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(shards[i], got); d != "" {
			t.Fatalf("(-want +got):\n%s", d)
		}
	}
	runs, _ := r.Runs()
	for i := range runs {
		got, err := decodeRunRecord(EncodeRunRecord(&runs[i]))
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(runs[i], got); d != "" {
			t.Fatalf("(-want +got):\n%s", d)
		}
	}
}
