package migrate

import (
	"fmt"
	"testing"
)

// A group leader's task names are "<prefix>/g<group>", made in advance or
// not.
func TestGroupTaskNames(t *testing.T) {
	prefixes := map[groupTask]string{leadTask: "lead", compactTask: "compact", resolveTask: "resolve", promoteTask: "promote"}
	for k := groupTask(0); k < numGroupTasks; k++ {
		for _, g := range []int{0, 1, 3, namedGroups - 1, namedGroups, 100, -1} {
			if got, want := groupTaskName(k, g), fmt.Sprintf("%s/g%d", prefixes[k], g); got != want {
				t.Fatalf("groupTaskName(%d, %d) = %q, want %q", k, g, got, want)
			}
		}
	}
}
