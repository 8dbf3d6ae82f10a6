package job

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/wire/wireref"
)

// ownBytes reads a byte string with the reference reader as Decode keeps
// it: a copy, nil when empty.
func ownBytes(r *wireref.Reader) []byte {
	if p := r.Bytes(); len(p) > 0 {
		return append([]byte(nil), p...)
	}
	return nil
}

// refDecode decodes a job record field by field with the reference
// reader (package wireref, written apart from wire), so a faster Decode
// cannot drift from the plainest reading of the layout.
func refDecode(b []byte) (SplitJob, error) {
	r := wireref.MakeReader(b, codecTag, codecVersion)
	var j SplitJob
	j.ID = r.Uint()
	j.SourceRouteID = r.Uint()
	j.SourceGroup = int(r.Int())
	j.TargetGroup = int(r.Int())
	j.SplitKey = r.String()
	j.SourceStart = r.String()
	j.MovingEnd = r.String()
	j.MovingRouteID = r.Uint()
	j.Phase = Phase(r.Uint())
	j.SnapshotTS = hlc.TS(r.Uint())
	j.FenceTS = hlc.TS(r.Uint())
	j.CutoverVersion = r.Uint()
	j.MaxImportedTS = hlc.TS(r.Uint())
	j.Pass = uint8(r.Uint())
	for n := r.Count(); n > 0; n-- {
		br := Bracket{Family: keys.Family(r.Uint())}
		br.Cursor = ownBytes(r)
		br.Done = r.Bool()
		br.Seq = r.Uint()
		j.Brackets = append(j.Brackets, br)
	}
	j.StagedCleared = r.Bool()
	j.SourceCleaned = r.Bool()
	j.RetryPhase = Phase(r.Uint())
	j.AbandonFromPhase = Phase(r.Uint())
	j.LastError = r.String()
	j.Retries = uint32(r.Uint())
	j.CreatedAtMs = r.Int()
	j.TerminalAtMs = r.Int()
	j.Writes = r.Uint()
	j.TrackerArmed = r.Bool()
	j.MinReadTS = hlc.TS(r.Uint())
	j.FenceVersion = r.Uint()
	j.DeltaFloor = hlc.TS(r.Uint())
	j.ReadFence = FenceState(r.Uint())
	j.ExpectedCutover = r.Uint()
	j.CutoverFloor = hlc.TS(r.Uint())
	j.Disarmed = r.Bool()
	switch {
	case r.Close() != nil:
		return SplitJob{}, fmt.Errorf("job: decode: %w", r.Err())
	case j.ReadFence > FenceClearing:
		return SplitJob{}, fmt.Errorf("job: decode: wire: malformed record: read fence state %d", j.ReadFence)
	case !j.Phase.valid():
		return SplitJob{}, fmt.Errorf("job: decode: wire: malformed record: phase %d", j.Phase)
	}
	return j, nil
}

// TestDecodeAgreesWithReference: on random records (long strings and
// multi-byte varints among them), on the recorded ones, and on those
// bytes cut short, with bytes changed, inserted or dropped, Decode and
// DecodeWithoutBrackets fail exactly when refDecode fails, with its
// message, and otherwise return its record (without brackets for the
// latter). Each drawn record is also tried cut at every length and with
// each byte in turn set to a few telling values.
func TestDecodeAgreesWithReference(t *testing.T) {
	recorded := recordedJobs(t)
	var decoded, failed int
	rapid.Check(t, func(t *rapid.T) {
		var b []byte
		if rapid.Bool().Draw(t, "recorded") {
			b = append([]byte(nil), rapid.SampledFrom(recorded).Draw(t, "record")...)
		} else {
			j := randomJob(t)
			if rapid.Bool().Draw(t, "long") {
				j.SplitKey = rapid.StringN(0, 200, -1).Draw(t, "long_split")
				j.LastError = rapid.StringN(120, 300, -1).Draw(t, "long_error")
			}
			b = j.Encode()
		}
		for range rapid.IntRange(0, 3).Draw(t, "damages") {
			b = damage(t, b)
		}
		d, f := wireref.Try(b, func(c []byte) bool { return agreesWithReference(t, c) })
		decoded, failed = decoded+d, failed+f
	})
	if decoded == 0 || failed == 0 {
		t.Fatalf("the rig decoded %d and failed %d records: both cases must occur", decoded, failed)
	}
}

// agreesWithReference fails t unless Decode and DecodeWithoutBrackets
// agree with refDecode on b; it reports whether b decoded.
func agreesWithReference(t *rapid.T, b []byte) bool {
	want, wantErr := refDecode(b)
	for _, d := range []struct {
		name   string
		decode func([]byte) (SplitJob, error)
	}{{"Decode", Decode}, {"DecodeWithoutBrackets", DecodeWithoutBrackets}} {
		got, gotErr := d.decode(b)
		if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
			t.Fatalf("%s of %x: error %v, reference %v", d.name, b, gotErr, wantErr)
		}
		if wantErr != nil {
			continue
		}
		w := want
		if d.name == "DecodeWithoutBrackets" {
			w.Brackets = nil
		}
		if !reflect.DeepEqual(w, got) { // cmp.Equal is slow for this many records
			t.Fatalf("%s of %x differs from the reference: %s", d.name, b, cmp.Diff(w, got))
		}
	}
	return wantErr == nil
}

// damage returns b cut short, with a byte changed, or with one inserted
// or dropped, or b as it was.
func damage(t *rapid.T, b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	switch rapid.IntRange(0, 4).Draw(t, "damage") {
	case 1:
		return b[:rapid.IntRange(0, len(b)).Draw(t, "cut")]
	case 2:
		i := rapid.IntRange(0, len(b)-1).Draw(t, "at")
		b[i] = rapid.SampledFrom([]byte{0, 1, 2, 0x7f, 0x80, 0xff, rapid.Byte().Draw(t, "any")}).Draw(t, "byte")
	case 3:
		i := rapid.IntRange(0, len(b)).Draw(t, "at")
		return append(b[:i:i], append([]byte{rapid.Byte().Draw(t, "byte")}, b[i:]...)...)
	case 4:
		i := rapid.IntRange(0, len(b)-1).Draw(t, "at")
		return append(b[:i:i], b[i+1:]...)
	}
	return b
}
