package coord

import (
	"flag"
	"strings"
	"testing"

	"pgregory.net/rapid"
	"shardsim/model/bugs"
)

// TestOracleDetectsBugs shows that the random differential state machine
// finds every coord bug on its own, without a script: with the bug on,
// some check of some history fails (the oracle's comparison or a property
// checker). coord.split-two-txns needs a request lost between its two
// transactions, so it runs with faults; the others run fault-free, with
// races (which coord.etcd-blind-write needs).
func TestOracleDetectsBugs(t *testing.T) {
	if testing.Short() {
		t.Skip("long: searches for every bug")
	}
	for name, v := range map[string]string{"rapid.nofailfile": "true", "rapid.shrinktime": "10ms", "rapid.checks": "2000"} {
		fl := flag.Lookup(name)
		old := fl.Value.String()
		if old != fl.DefValue {
			continue // chosen on the command line
		}
		if err := flag.Set(name, v); err != nil {
			t.Fatal(err)
		}
		defer flag.Set(name, old)
	}
	for _, b := range bugs.ForProtocol("coord") {
		t.Run(b.Name, func(t *testing.T) {
			faults := b.Name == bugs.CoordSplitTwoTxns
			rec := &recordingTB{name: t.Name()}
			stats := newOracleStats()
			func() {
				defer func() {
					if p := recover(); p != nil && p != errRecordedFailure {
						panic(p)
					}
				}()
				withRapidSteps(t, "100", func() {
					rapid.Check(rec, func(rt *rapid.T) { runOracle(rt, cfgWith(b.Name), faults, stats) })
				})
			}()
			if !rec.failed {
				t.Fatalf("no violation in %d checks", stats.checks)
			}
			first, _, _ := strings.Cut(rec.first, "\n")
			t.Logf("found: %s", strings.TrimPrefix(first, "[rapid] "))
		})
	}
}
