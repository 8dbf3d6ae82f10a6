package scenarios

import (
	"testing"

	"shardsim/property"
)

// FuzzKV feeds the fuzzer's bytes to the kv scenario as its choice stream:
// `go test -fuzz FuzzKV ./scenarios/` explores schedules and fault mixes, and
// the minimiser shrinks any failing input towards the quiet all-zero stream.
// A failing input replays with `simrun run -scenario kv -choices FILE`. An
// undecided run (the history check ran out of time) fails too: it is a
// finding to look at, not a pass.
func FuzzKV(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0xff, 0x10, 0x80, 0x01, 0xff, 0xff, 0x33, 0x90})
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Run("kv", Config{Choices: data})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != property.VerdictOK {
			t.Fatalf("%s %s: %s", res.Verdict, res.Property, res.Detail)
		}
	})
}
