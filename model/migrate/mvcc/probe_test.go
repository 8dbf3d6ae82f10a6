package mvcc

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
)

// heldProbe is a Probe taken during a random run, with what the
// straightforward model held for its key and staged twin at the time.
type heldProbe struct {
	raw          string
	st           Staging
	p            Probe
	live, staged []Version
}

// Current never vouches for a probe whose key or staged twin changed: on
// random edits (puts, replacements, deletes, truncations, keys dropped and
// added again, records handed on to other keys), whenever Current(p) holds,
// the probe's view holds exactly what the model held when it was taken and
// what it holds now, and a fresh Probe reads the same records at the same
// generations. Current must also answer both ways (it is no constant).
func TestCurrentMeansUnchanged(t *testing.T) {
	var current, stale int
	rapid.Check(t, func(t *rapid.T) {
		s, ref := New(), refStore{}
		raws := []string{"a", "b", "c"}
		stagings := []Staging{{}, {Active: true, Job: 7}, {Active: true, Job: 9}}
		var held []heldProbe
		for i, n := 0, rapid.IntRange(1, 120).Draw(t, "ops"); i < n; i++ {
			raw := rapid.SampledFrom(raws).Draw(t, "raw")
			st := rapid.SampledFrom(stagings).Draw(t, "staging")
			k := raw
			if st.Active && rapid.Bool().Draw(t, "staged") {
				k = keys.StageKey(st.Job, raw)
			}
			ts := hlc.TS(rapid.IntRange(1, 8).Draw(t, "ts"))
			switch rapid.IntRange(0, 4).Draw(t, "op") {
			case 0:
				v := Version{TS: ts, Value: fmt.Sprintf("v%d", i)}
				s.Put(k, v)
				ref.put(k, v)
			case 1:
				s.Delete(k, ts)
				ref.keep(k, func(v Version) bool { return v.TS != ts })
			case 2:
				s.DeleteBelow(k, ts)
				ref.keep(k, func(v Version) bool { return v.TS >= ts })
			case 3:
				s.DeleteAtOrBelow(k, ts)
				ref.keep(k, func(v Version) bool { return v.TS > ts })
			case 4:
				h := heldProbe{raw: raw, st: st, p: s.Probe(raw, st), live: slices.Clone(ref[raw])}
				if st.Active {
					h.staged = slices.Clone(ref[keys.StageKey(st.Job, raw)])
				}
				held = append(held, h)
			}
			for _, h := range held {
				if !s.Current(&h.p) {
					stale++
					continue
				}
				current++
				var nowStaged []Version
				if h.st.Active {
					nowStaged = ref[keys.StageKey(h.st.Job, h.raw)]
				}
				v := h.p.View
				if !slices.Equal(v.live, h.live) || !slices.Equal(v.staged, h.staged) || !slices.Equal(v.live, ref[h.raw]) || !slices.Equal(v.staged, nowStaged) {
					t.Fatalf("after op %d a current probe of %s %+v holds %v/%v; held %v/%v, now %v/%v", i, h.raw, h.st, v.live, v.staged, h.live, h.staged, ref[h.raw], nowStaged)
				}
				fresh := s.Probe(h.raw, h.st)
				if fresh.live != h.p.live || fresh.staged != h.p.staged || fresh.View.LiveGen != v.LiveGen || fresh.View.StagedGen != v.StagedGen {
					t.Fatalf("after op %d a current probe of %s %+v reads other records or generations than a fresh one", i, h.raw, h.st)
				}
			}
		}
	})
	if current == 0 || stale == 0 {
		t.Fatalf("Current answered %d times true, %d false: the runs tested nothing", current, stale)
	}
}

// Current answers only for a probe of its own store: a probe of another
// store, even a Clone holding the same records at the same generations, and
// the zero Probe are never current, while the probed store (unchanged)
// still vouches for it.
func TestCurrentOnlyForItsOwnStore(t *testing.T) {
	for _, filled := range []bool{false, true} {
		s := New()
		if filled {
			s.Put("a", Version{TS: hlc.TS(5), Value: "x"})
		}
		p := s.Probe("a", Staging{})
		clone, other := s.Clone(), New()
		if !s.Current(&p) {
			t.Fatalf("filled=%v: the probed store does not vouch for its unchanged probe", filled)
		}
		if clone.Current(&p) || other.Current(&p) {
			t.Fatalf("filled=%v: another store vouched for the probe (clone %v, fresh %v)", filled, clone.Current(&p), other.Current(&p))
		}
		if s.Current(&Probe{}) {
			t.Fatalf("filled=%v: the zero Probe is current", filled)
		}
	}
}
