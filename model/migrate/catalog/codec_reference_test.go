package catalog

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"shardsim/model/migrate/hlc"
)

// refCatalogReader is the plainest reading of the catalog record, written
// apart from package wire: the rest re-sliced after each field, every
// varint through encoding/binary, the first error kept, its message
// spelled as wire spells it.
type refCatalogReader struct {
	b   []byte
	err error
}

func (r *refCatalogReader) fail(what string) {
	if r.err == nil {
		r.b, r.err = nil, fmt.Errorf("wire: malformed record: bad %s", what)
	}
}

func (r *refCatalogReader) uint() uint64 {
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

func (r *refCatalogReader) int() int64 {
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

func (r *refCatalogReader) bool() bool {
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

func (r *refCatalogReader) string() string {
	n := r.uint()
	if r.err != nil {
		return ""
	}
	if n > uint64(len(r.b)) {
		r.fail("bytes")
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// refDecode decodes a catalog record field by field with
// refCatalogReader, as Decode is specified: a route state past
// WriteFenced is refused as soon as its route is read.
func refDecode(b []byte) (Catalog, error) {
	switch {
	case len(b) < 2 || b[0] != codecTag:
		return Catalog{}, fmt.Errorf("catalog: decode: wire: malformed record: not a %q record", codecTag)
	case b[1] != codecVersion:
		return Catalog{}, fmt.Errorf("catalog: decode: wire: malformed record: unknown version %d of %q", b[1], codecTag)
	}
	r := &refCatalogReader{b: b[2:]}
	c := Catalog{Version: r.uint(), NextRouteID: r.uint(), LastCutover: r.uint()}
	n := r.uint()
	if n > uint64(len(r.b)) {
		r.fail("count")
		n = 0
	}
	for ; n > 0; n-- {
		var rt Route
		rt.ID = r.uint()
		rt.Start = r.string()
		rt.End = r.string()
		rt.Group = int(r.int())
		st := r.uint()
		rt.Parent = r.uint()
		rt.StagedVisible = r.bool()
		rt.MigrationJob = r.uint()
		rt.MinWriteTSExclusive = hlc.TS(r.uint())
		rt.MinReadTS = hlc.TS(r.uint())
		if st > uint64(WriteFenced) {
			return Catalog{}, fmt.Errorf("catalog: decode: wire: malformed record: route state %d", st)
		}
		rt.State = State(st)
		c.Routes = append(c.Routes, rt)
	}
	switch {
	case r.err != nil:
		return Catalog{}, fmt.Errorf("catalog: decode: %w", r.err)
	case len(r.b) != 0:
		return Catalog{}, fmt.Errorf("catalog: decode: wire: malformed record: %d trailing bytes", len(r.b))
	}
	return c, nil
}

// refDecodeVersion is DecodeVersion as specified: the header and the
// first varint, the rest unread.
func refDecodeVersion(b []byte) (uint64, error) {
	if len(b) < 2 || b[0] != codecTag || b[1] != codecVersion {
		_, err := refDecode(b) // the header's error
		return 0, err
	}
	r := &refCatalogReader{b: b[2:]}
	v := r.uint()
	if r.err != nil {
		return 0, fmt.Errorf("catalog: decode: %w", r.err)
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
		ok := catalogAgrees(t, b)
		for i := range b {
			ok = catalogAgrees(t, b[:i]) && ok
			for _, v := range []byte{0, 1, 2, 0x7f, 0x80, 0xff, b[i] + 1, b[i] - 1} {
				c := append([]byte(nil), b...)
				c[i] = v
				if catalogAgrees(t, c) {
					decoded++
				} else {
					failed++
				}
			}
		}
		if ok {
			decoded++
		}
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
