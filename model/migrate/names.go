package migrate

import "strconv"

// groupTask names a task a group's leader runs.
type groupTask uint8

// The tasks of a group leader.
const (
	leadTask    groupTask = iota // "lead/g<g>": takes over the group's clock and serves
	compactTask                  // "compact/g<g>": compacts history below the retention
	resolveTask                  // "resolve/g<g>": rolls back stalled transactions
	promoteTask                  // "promote/g<g>": promotes a finished job's staged rows
	numGroupTasks
)

// groupTaskPrefixes are the task names without the group number.
var groupTaskPrefixes = [numGroupTasks]string{"lead/g", "compact/g", "resolve/g", "promote/g"}

// namedGroups is how many groups' task names are made in advance: more
// than a world has.
const namedGroups = 16

// groupTaskNames are the task names of the first namedGroups groups, made
// once: every election starts a leader's tasks, and formatting their names
// cost allocations each time.
var groupTaskNames = func() (names [numGroupTasks][namedGroups]string) {
	for k, prefix := range groupTaskPrefixes {
		for g := range names[k] {
			names[k][g] = prefix + strconv.Itoa(g)
		}
	}
	return names
}()

// groupTaskName returns the name of task k of group g's leader.
func groupTaskName(k groupTask, g int) string {
	if g >= 0 && g < namedGroups {
		return groupTaskNames[k][g]
	}
	return groupTaskPrefixes[k] + strconv.Itoa(g)
}
