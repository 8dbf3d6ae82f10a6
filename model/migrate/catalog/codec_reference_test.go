package catalog

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/wire/wireref"
)

// refDecode decodes a catalog record field by field with the reference
// reader (package wireref, written apart from wire), as Decode is
// specified: a route state past WriteFenced is refused as soon as its
// route is read.
func refDecode(b []byte) (Catalog, error) {
	r := wireref.MakeReader(b, codecTag, codecVersion)
	c := Catalog{Version: r.Uint(), NextRouteID: r.Uint(), LastCutover: r.Uint()}
	for n := r.Count(); n > 0; n-- {
		var rt Route
		rt.ID = r.Uint()
		rt.Start = r.String()
		rt.End = r.String()
		rt.Group = int(r.Int())
		st := r.Uint()
		rt.Parent = r.Uint()
		rt.StagedVisible = r.Bool()
		rt.MigrationJob = r.Uint()
		rt.MinWriteTSExclusive = hlc.TS(r.Uint())
		rt.MinReadTS = hlc.TS(r.Uint())
		if st > uint64(WriteFenced) {
			return Catalog{}, fmt.Errorf("catalog: decode: wire: malformed record: route state %d", st)
		}
		rt.State = State(st)
		c.Routes = append(c.Routes, rt)
	}
	if r.Close() != nil {
		return Catalog{}, fmt.Errorf("catalog: decode: %w", r.Err())
	}
	return c, nil
}

// refDecodeVersion is DecodeVersion as specified: the header and the
// first varint, the rest unread.
func refDecodeVersion(b []byte) (uint64, error) {
	r := wireref.MakeReader(b, codecTag, codecVersion)
	v := r.Uint()
	if r.Err() != nil {
		return 0, fmt.Errorf("catalog: decode: %w", r.Err())
	}
	return v, nil
}

// TestDecodeAgreesWithReference: on random catalogs (long bounds, large
// varints and negative groups among them) and on those bytes damaged, cut
// at every length and with each byte in turn set to telling values,
// Decode and DecodeVersion fail exactly when the reference fails, with
// its message, and otherwise return what it returns.
func TestDecodeAgreesWithReference(t *testing.T) {
	var decoded, failed int
	rapid.Check(t, func(t *rapid.T) {
		b := randomCatalog(t).Encode()
		if rapid.Bool().Draw(t, "damaged") {
			i := rapid.IntRange(0, len(b)-1).Draw(t, "at")
			b[i] = rapid.SampledFrom([]byte{0, 1, 2, 3, 0x7f, 0x80, 0xff}).Draw(t, "byte")
		}
		d, f := wireref.Try(b, func(c []byte) bool { return catalogAgrees(t, c) })
		decoded, failed = decoded+d, failed+f
	})
	if decoded == 0 || failed == 0 {
		t.Fatalf("the rig decoded %d and failed %d records: both cases must occur", decoded, failed)
	}
}

// catalogAgrees fails t unless Decode and DecodeVersion agree with the
// reference on b; it reports whether b decoded.
func catalogAgrees(t *rapid.T, b []byte) bool {
	want, wantErr := refDecode(b)
	got, gotErr := Decode(b)
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Fatalf("Decode of %x: error %v, reference %v", b, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Decode of %x differs from the reference: %s", b, cmp.Diff(want, got))
	}
	wantV, wantVErr := refDecodeVersion(b)
	gotV, gotVErr := DecodeVersion(b)
	if gotV != wantV || fmt.Sprint(gotVErr) != fmt.Sprint(wantVErr) {
		t.Fatalf("DecodeVersion of %x = %d, %v; reference %d, %v", b, gotV, gotVErr, wantV, wantVErr)
	}
	return wantErr == nil
}

// randomCatalog draws a catalog of up to four routes with every field
// set, not necessarily a valid one (the codec does not validate).
func randomCatalog(t *rapid.T) Catalog {
	c := Catalog{Version: rapid.Uint64().Draw(t, "version"), NextRouteID: rapid.Uint64Range(0, 300).Draw(t, "next"),
		LastCutover: rapid.Uint64().Draw(t, "last cutover")}
	for range rapid.IntRange(0, 4).Draw(t, "routes") {
		c.Routes = append(c.Routes, Route{
			ID:                  rapid.Uint64Range(0, 300).Draw(t, "id"),
			Start:               rapid.StringN(0, 140, -1).Draw(t, "start"),
			End:                 rapid.StringN(0, 3, -1).Draw(t, "end"),
			Group:               rapid.IntRange(-100, 1<<20).Draw(t, "group"),
			State:               State(rapid.IntRange(0, 1).Draw(t, "state")),
			Parent:              rapid.Uint64Range(0, 300).Draw(t, "parent"),
			StagedVisible:       rapid.Bool().Draw(t, "staged"),
			MigrationJob:        rapid.Uint64Range(0, 300).Draw(t, "job"),
			MinWriteTSExclusive: hlc.TS(rapid.Uint64().Draw(t, "floor")),
			MinReadTS:           hlc.TS(rapid.Uint64().Draw(t, "min read")),
		})
	}
	return c
}
