package keymovecheck

import (
	"shardsim/property"
	"sort"

	"shardsim/model/keymove"
)

// forcedDone reports whether plan item i ended Done under force.
func (d *Durable) forcedDone(i int) bool {
	return i >= 0 && d.cfg.Force && d.ck != nil && d.ck.Keys[i].Forced
}

// CheckNoLoss is KM.NoLoss once the plan has ended: every key's owner
// holds the key's latest value (its last applied client write, or its
// bootstrap value), acknowledged or not.
func (d *Durable) CheckNoLoss() *property.Violation {
	for _, key := range d.sortedKeys() {
		want, has := d.Latest(key)
		if !has || d.forcedDone(d.cfg.Plan.Index(key)) {
			continue
		}
		owner := d.owner[key]
		got, found := d.get(owner, keymove.DataKey(key))
		if !found || string(got.Value) != want {
			return violation(property.KMNoLoss, key, "key %q ends on %s holding %q (found=%v); its latest write is %q", key, owner, got.Value, found, want)
		}
	}
	return nil
}

// CheckCompletes is KM.Completes at the end of the run: the last
// checkpoint marks the plan complete, every key is Done (and mapped to its
// target) or Failed (and still mapped to its source), and the executor's
// summary reports the same counts.
func (d *Durable) CheckCompletes(reported *keymove.Summary) *property.Violation {
	ck := d.ck
	if ck == nil || !ck.Complete {
		return violation(property.KMCompletes, "", "the plan (%d keys) did not reach its end after the heal", len(d.cfg.Plan.Moves))
	}
	done, failed := 0, 0
	for i, ks := range ck.Keys {
		mv := d.cfg.Plan.Moves[i]
		switch {
		case ks.State == keymove.Done && d.owner[mv.Key] == mv.Target:
			done++
		case ks.State == keymove.Failed && d.owner[mv.Key] == mv.Source:
			failed++
		default:
			return violation(property.KMCompletes, mv.Key, "key %q ends %s but is mapped to %s (plan %s -> %s)", mv.Key, ks.State, d.owner[mv.Key], mv.Source, mv.Target)
		}
	}
	if reported == nil {
		return violation(property.KMCompletes, "", "the plan ended but the executor reported no summary")
	}
	if reported.Done != done || len(reported.Failed) != failed || !reported.Complete {
		return violation(property.KMCompletes, "", "the summary reports %d done, %d failed; the stores say %d and %d", reported.Done, len(reported.Failed), done, failed)
	}
	return nil
}

func (d *Durable) sortedKeys() []string {
	out := make([]string, 0, len(d.owner))
	for k := range d.owner {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
