package job

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
)

// refReader is the plainest reading of the record layout, written apart
// from package wire: every field through encoding/binary, the first
// error kept, its message spelled as wire spells it. The agreement test
// holds Decode to it, so a faster Decode cannot drift from it.
type refReader struct {
	b   []byte
	err error
}

func (r *refReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("wire: malformed record: bad %s", what)
	}
}

func (r *refReader) uint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("uint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *refReader) int() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("int")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *refReader) bool() bool {
	if r.err != nil {
		return false
	}
	if len(r.b) == 0 || r.b[0] > 1 {
		r.fail("bool")
		return false
	}
	v := r.b[0] == 1
	r.b = r.b[1:]
	return v
}

func (r *refReader) bytes() []byte {
	n := r.uint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.fail("bytes")
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	if len(p) == 0 {
		return nil
	}
	return append([]byte(nil), p...)
}

func (r *refReader) count() int {
	n := r.uint()
	if n > uint64(len(r.b)) {
		r.fail("count")
		return 0
	}
	return int(n)
}

// refDecode decodes a job record field by field with refReader.
func refDecode(b []byte) (SplitJob, error) {
	switch {
	case len(b) < 2 || b[0] != codecTag:
		return SplitJob{}, fmt.Errorf("job: decode: wire: malformed record: not a %q record", codecTag)
	case b[1] != codecVersion:
		return SplitJob{}, fmt.Errorf("job: decode: wire: malformed record: unknown version %d of %q", b[1], codecTag)
	}
	r := &refReader{b: b[2:]}
	var j SplitJob
	j.ID = r.uint()
	j.SourceRouteID = r.uint()
	j.SourceGroup = int(r.int())
	j.TargetGroup = int(r.int())
	j.SplitKey = string(r.bytes())
	j.SourceStart = string(r.bytes())
	j.MovingEnd = string(r.bytes())
	j.MovingRouteID = r.uint()
	j.Phase = Phase(r.uint())
	j.SnapshotTS = hlc.TS(r.uint())
	j.FenceTS = hlc.TS(r.uint())
	j.CutoverVersion = r.uint()
	j.MaxImportedTS = hlc.TS(r.uint())
	j.Pass = uint8(r.uint())
	for n := r.count(); n > 0; n-- {
		br := Bracket{Family: keys.Family(r.uint())}
		br.Cursor = r.bytes()
		br.Done = r.bool()
		br.Seq = r.uint()
		j.Brackets = append(j.Brackets, br)
	}
	j.StagedCleared = r.bool()
	j.SourceCleaned = r.bool()
	j.RetryPhase = Phase(r.uint())
	j.AbandonFromPhase = Phase(r.uint())
	j.LastError = string(r.bytes())
	j.Retries = uint32(r.uint())
	j.CreatedAtMs = r.int()
	j.TerminalAtMs = r.int()
	j.Writes = r.uint()
	j.TrackerArmed = r.bool()
	j.MinReadTS = hlc.TS(r.uint())
	j.FenceVersion = r.uint()
	j.DeltaFloor = hlc.TS(r.uint())
	j.ReadFence = FenceState(r.uint())
	j.ExpectedCutover = r.uint()
	j.CutoverFloor = hlc.TS(r.uint())
	j.Disarmed = r.bool()
	switch {
	case r.err != nil:
		return SplitJob{}, fmt.Errorf("job: decode: %w", r.err)
	case len(r.b) != 0:
		return SplitJob{}, fmt.Errorf("job: decode: wire: malformed record: %d trailing bytes", len(r.b))
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
		ok := agreesWithReference(t, b)
		// Every shorter cut, and every byte in turn set to values a varint,
		// a bool or a length reads differently.
		for i := range b {
			ok = agreesWithReference(t, b[:i]) && ok
			for _, v := range []byte{0, 1, 2, 0x7f, 0x80, 0xff, b[i] + 1, b[i] - 1} {
				c := append([]byte(nil), b...)
				c[i] = v
				if agreesWithReference(t, c) {
					decoded++
				} else {
					failed++
				}
			}
		}
		if ok {
			decoded++
		} else {
			failed++
		}
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
