package catalog

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzDecode: any input either fails to decode or decodes to a catalog
// that re-encodes to the same bytes, and whose version DecodeVersion reads
// alone.
func FuzzDecode(f *testing.F) {
	fenced, _, _ := start().Fence(2, "k5")
	f.Add(start().Encode())
	f.Add(fenced.Encode())
	f.Add([]byte("C\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Decode(b)
		if v, verr := DecodeVersion(b); err == nil && (verr != nil || v != c.Version) {
			t.Fatalf("DecodeVersion = %d, %v; Decode's version is %d", v, verr, c.Version)
		}
		if err != nil {
			return
		}
		again, err := Decode(c.Encode())
		if err != nil || !cmp.Equal(c, again) {
			t.Fatalf("re-decode: %v %s", err, cmp.Diff(c, again))
		}
	})
}
