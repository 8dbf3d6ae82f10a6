package scenarios

import "shardsim/property"

// listsProperties are the collection properties the lists worlds judge.
var listsProperties = []property.Name{
	property.LLinearizable, property.LNoLostItem, property.LNoDoublePop, property.LMetaConsistent, property.LCountConsistent,
}

func init() {
	Register(Scenario{
		Name:        "lists",
		Description: "many clients push and pop both ends of a few hot lists (one with a binary key that extends another's with a NUL byte), read, LSET, DEL and MULTI/EXEC them, and add and remove hash, set and sorted-set members, while a compactor on the leader of their group folds deltas and collects popped rows, through crashes, pauses, leader changes, clock skew and lost or ambiguous requests",
		Properties:  append(append([]property.Name(nil), listsProperties...), property.MNoLostWrite, property.MSingleWriter, property.MCatalogNonOverlap),
		Reach:       "lists",
		Run:         func(cfg Config) (Result, error) { return runLists("lists", listsOnly, cfg) },
	})
	Register(Scenario{
		Name:        "lists-migrate",
		Description: "the lists workload (collection clients, compactors, faults) while the range holding the lists, hashes, sets and sorted sets is split and moved to another raft group, with up to one key-value client beside them (off the list families) and the collection clients working until the split ends: nothing pushed is lost or popped twice across BACKFILL, FENCE, CUTOVER and promotion",
		Properties:  append(append([]property.Name(nil), listsProperties...), migrateProperties...),
		Reach:       "lists",
		Run:         func(cfg Config) (Result, error) { return runLists("lists-migrate", listsSplit, cfg) },
	})
}

// runLists runs one lists world: build, run, judge the collections and
// the migration, count.
func runLists(name string, kind migrateKind, cfg Config) (Result, error) {
	m, err := newMigrateWorld(name, kind, cfg)
	if err != nil {
		return Result{}, err
	}
	defer m.w.Loop.Close() // parked tasks would keep the world alive in a sweep
	m.w.Run()
	m.lists.final(cfg)
	m.chk.final(cfg)
	m.count()
	m.lists.count()
	return m.w.Result(), nil
}
