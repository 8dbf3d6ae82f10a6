package job

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzDecode: any input either fails to decode or decodes to a record
// that re-encodes and decodes to itself.
func FuzzDecode(f *testing.F) {
	j := SplitJob{ID: 3, SourceGroup: 1, TargetGroup: 2, SplitKey: "k", Phase: DeltaCopy, LastError: "x"}
	j.ResetBrackets(2)
	f.Add(j.Encode())
	f.Add([]byte("J\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Decode(b)
		if err != nil {
			return
		}
		again, err := Decode(d.Encode())
		if err != nil || !cmp.Equal(d, again) {
			t.Fatalf("re-decode: %v %s", err, cmp.Diff(d, again))
		}
	})
}
