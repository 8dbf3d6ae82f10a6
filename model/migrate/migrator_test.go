package migrate

import (
	"testing"

	"shardsim/model/migrate/job"
)

// jobKey is job.Key for every id asked, in any order: its memo of the last
// id must not answer for an id it never made a key for (a fresh migrator
// remembers id 0 with no key).
func TestMigratorJobKey(t *testing.T) {
	var m migrator
	for _, id := range []uint64{0, 0, 7, 7, 0, 1, 1 << 63} {
		if got, want := m.jobKey(id), job.Key(id); got != want {
			t.Fatalf("jobKey(%d) = %q, want %q", id, got, want)
		}
	}
}
