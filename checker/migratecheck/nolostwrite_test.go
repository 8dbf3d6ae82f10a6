package migratecheck

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

// On random runs (writes applied to two replica stores, some acknowledged,
// then random edits: lost, replaced and compacted versions, staged copies,
// a moving floor, owners and staging switching between passes, spans), the
// incremental checker returns after every pass exactly what the full
// re-check returns, violations included, to the message.
func TestNoLostWriteCheckerMatchesFull(t *testing.T) {
	var passes, violations int
	// rapid's default 100 runs rarely build the coincidences (two stores
	// with a key at one generation, a floor raised past a stray version)
	// that an incomplete stamp would get wrong: run 3000.
	for range 30 {
		rapid.Check(t, randomNoLostWriteRun(&passes, &violations))
	}
	t.Logf("%d passes agreed, %d of them violations", passes, violations)
	if violations == 0 || violations == passes {
		t.Fatalf("%d violations in %d passes: the runs judged nothing interesting", violations, passes)
	}
}

// randomNoLostWriteRun is one random run of TestNoLostWriteCheckerMatchesFull.
func randomNoLostWriteRun(passes, violations *int) func(*rapid.T) {
	return func(t *rapid.T) {
		o := NewVersionOracle()
		c := NewNoLostWriteChecker(o)
		stores := []*mvcc.Store{mvcc.New(), mvcc.New()}
		userKeys := []string{"a", "b", "k1", "k2"}
		var acked []AckedWrite
		ts := hlc.TS(0)
		var floor hlc.TS
		staging := mvcc.Staging{}
		owner := 0
		routing := uint64(0) // bumped with every change of owner, which moves b
		route := func(key string) (int, bool) {
			if key == "b" && owner == 1 {
				return 0, false // no owner answers for b
			}
			return owner, true
		}
		steps := rapid.IntRange(1, 40).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			key := rapid.SampledFrom(userKeys).Draw(t, "key")
			switch rapid.IntRange(0, 30).Draw(t, "action") {
			case 0, 1, 2, 3: // a write (maybe at an older, caller-chosen ts), applied on one or both replicas
				ts += hlc.TS(rapid.IntRange(1, 5).Draw(t, "dt"))
				at := ts
				if rapid.IntRange(0, 2).Draw(t, "caller") == 0 {
					at = hlc.TS(rapid.IntRange(1, int(ts)).Draw(t, "at"))
				}
				if _, taken := o.At(key, at); taken {
					break
				}
				op := fmt.Sprintf("w%d", i)
				v := mvcc.Version{TS: at, Value: op, Tombstone: rapid.IntRange(0, 4).Draw(t, "del") == 0}
				o.Add(AppliedWrite{Op: op, Key: key, Version: v})
				ahead := rapid.IntRange(0, 1).Draw(t, "ahead")
				for n, s := range stores {
					if n == ahead || rapid.IntRange(0, 3).Draw(t, "lag") > 0 {
						s.Put(key, v)
					}
				}
				if rapid.Bool().Draw(t, "ack") {
					acked = append(acked, AckedWrite{Op: op, Key: key, TS: at})
				}
			case 8: // a version no write created, on one replica
				s := stores[rapid.IntRange(0, 1).Draw(t, "store")]
				s.Put(key, mvcc.Version{TS: hlc.TS(rapid.IntRange(1, int(ts)+1).Draw(t, "stray")), Value: "stray"})
			case 9: // a version lost on one replica
				s := stores[rapid.IntRange(0, 1).Draw(t, "store")]
				if vs := s.Versions(key); len(vs) > 0 {
					s.Delete(key, vs[rapid.IntRange(0, len(vs)-1).Draw(t, "which")].TS)
				}
			case 10: // compaction below a timestamp
				s := stores[rapid.IntRange(0, 1).Draw(t, "store")]
				s.DeleteBelow(key, hlc.TS(rapid.IntRange(0, int(ts)+1).Draw(t, "below")))
			case 11: // a staged copy, maybe altered
				s := stores[rapid.IntRange(0, 1).Draw(t, "store")]
				if vs := s.Versions(key); len(vs) > 0 {
					v := vs[0]
					if rapid.Bool().Draw(t, "alter") {
						v.Value += "!"
					}
					s.Put(keys.StageKey(7, key), v)
					s.Delete(key, v.TS)
				}
			case 12, 13:
				floor = hlc.TS(rapid.IntRange(0, int(ts)+1).Draw(t, "floor"))
			case 14, 15:
				owner = rapid.IntRange(0, 1).Draw(t, "owner")
				routing++
				staging = mvcc.StagingOf(rapid.Bool().Draw(t, "staging"), 7)
			case 30: // an acknowledgement of a write never applied so
				acked = append(acked, AckedWrite{Op: "ghost", Key: key, TS: ts + 1})
			}
			var spans []keys.Span
			if rapid.Bool().Draw(t, "spans") {
				spans = []keys.Span{{Start: "k"}}
			}
			owners := Owners{RoutingGen: routing, Route: route, Owner: func(r int) Owner {
				return Owner{Store: stores[r], Staging: staging, Floor: floor}
			}}
			full := o.CheckNoLostWrite(acked, ReadFrom(owners), "pass", spans...)
			inc := c.Check(acked, owners, "pass", spans...)
			*passes++
			if full != nil {
				*violations++
			}
			if (inc == nil) != (full == nil) || inc != nil && *inc != *full {
				t.Fatalf("step %d: incremental %v, full %v", i, inc, full)
			}
		}
	}
}
