package scenarios

import (
	"testing"

	"shardsim/model/migrate/job"
)

// What every migrate world shares (sweeps run worlds at once) has no spare
// room: an append to it by any holder must copy, never write where another
// world could be writing too. And it is what a world would make itself.
func TestMigrateWorldSharedBytesHaveNoRoom(t *testing.T) {
	check := func(name string, b []byte, want string) {
		t.Helper()
		if cap(b) != len(b) {
			t.Errorf("%s: capacity %d, length %d: an append would write into shared room", name, cap(b), len(b))
		}
		if string(b) != want {
			t.Errorf("%s = %q, want %q", name, b, want)
		}
	}
	check("catalogKey", catalogKey, job.CatalogKey)
	check("initialCatalogValue", initialCatalogValue, string(initialCatalog().Encode()))
	check("nextJobIDKey", nextJobIDKey, job.NextJobIDKey)
	for id := uint64(0); id <= maxPriorJobs; id++ {
		p := priorJobOf(id)
		check("prior job counter", p.next, string(job.EncodeID(id)))
		if id == 0 {
			continue
		}
		// What loadPriorJobs wrote before the jobs were encoded once.
		phase := job.Done
		if id%3 == 0 {
			phase = job.Abandoned
		}
		j := job.SplitJob{ID: id, SourceRouteID: 1, TargetGroup: 1, SplitKey: "k05", Phase: phase, Writes: 1}
		check("prior job key", p.key, job.HistKey(0, id))
		check("prior job value", p.value, string(j.Encode()))
	}
}
