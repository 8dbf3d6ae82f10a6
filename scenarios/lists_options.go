package scenarios

import (
	"fmt"
	"time"

	"shardsim/model/listdelta"
	"shardsim/model/migrate/keys"
	"shardsim/nemesis"
)

// listsOptions is what the collection clients and compactors of a lists
// world draw: how many, what they do, and the design's limits.
type listsOptions struct {
	clients, ops int
	pace         time.Duration
	lists        []string // the hot lists (the first may have a binary sibling among them)
	counted      []countedKey
	cfg          listdelta.Config
	compactEvery time.Duration
	listShare    float64 // chance an operation is on a list (else on a counted collection)
	push, pop    float64 // shares of pushes and pops among list commands (with LSET and DEL at most 0.99: reads get the rest)
	lset, del    float64 // shares of LSET and DEL
	exec         float64 // chance a list operation is a MULTI/EXEC
	watchLag     time.Duration
	clockSpread  time.Duration // how far apart the clients' own clocks may be
	pushMax      int           // most values one push carries
	lingerOps    int           // lists-migrate: most operations a client adds past its quota while the split is live
	lingerPace   time.Duration // the pace of those
}

// countedKey is one hash, set or sorted set of the workload.
type countedKey struct {
	kind listdelta.Kind
	key  string
}

// drawListsOptions draws one run's options for a lists world: the data
// plane as the migration worlds draw it, a few key-value clients (none in
// lists) so the migration's own properties have histories, the
// collection workload and limits, and for lists-migrate the split.
func drawListsOptions(sw *nemesis.Swarm, kind migrateKind) (migrateOptions, *listsOptions) {
	var o migrateOptions
	if kind == listsSplit {
		o.clients = sw.Int("kv_clients", 0, 1)
		o.opsPer = sw.Int("kv_ops", 10, 30)
	}
	drawDataPlane(sw, &o)
	if kind == listsSplit {
		o.wl.families = kvFamiliesBesideLists()
	}
	l := &listsOptions{}
	l.clients = sw.Int("list_clients", 3, 8)
	l.ops = sw.Int("list_ops", 20, 60)
	l.pace = sw.Duration("list_pace", 2*time.Millisecond, 60*time.Millisecond)
	l.clockSpread = sw.Duration("list_clock_spread", 0, 40*time.Millisecond)
	l.pushMax = sw.Int("push_max", 1, 3)
	l.watchLag = sw.Duration("list_watch_lag", 10*time.Millisecond, 500*time.Millisecond)
	for i, n := 0, sw.Int("hot_lists", 1, 3); i < n; i++ {
		l.lists = append(l.lists, fmt.Sprintf("kq%d", i))
	}
	if sw.Flag("binary_keys", 0.8) {
		// A binary key that extends the first list's key with a NUL byte:
		// only a length-prefixed layout keeps their rows apart.
		l.lists = append(l.lists, l.lists[0]+"\x00x")
	}
	l.counted = []countedKey{{listdelta.Hash, "kh0"}, {listdelta.Hash, "kh0\x00y"}, {listdelta.Set, "ks0"}, {listdelta.ZSet, "kz0"}}
	l.listShare = sw.Rate("list_share", 1, 0.6, 0.9)
	l.push = sw.Rate("push_share", 1, 0.2, 0.4)
	l.pop = sw.Rate("pop_share", 1, 0.35, 0.5)
	l.lset = sw.Rate("lset_share", 1, 0.02, 0.06)
	l.del = sw.Rate("del_share", 1, 0.005, 0.03)
	l.exec = sw.Rate("exec_share", 1, 0.02, 0.12)
	l.cfg = listdelta.Config{
		MaxDeltaCount:          sw.Int("max_delta_count", 2, 12),
		MaxKeysPerCompactionTx: sw.Int("compact_batch", 1, 16),
		ScanWindow:             sw.Int("scan_window", 1, 8),
		Attempts:               sw.Int("attempts", 3, 8),
	}
	l.cfg.MaxDeltaScanLimit = l.cfg.MaxDeltaCount + sw.Int("delta_scan_extra", 1, 24)
	l.compactEvery = sw.Duration("compact_every", 10*time.Millisecond, 400*time.Millisecond)
	if kind == listsSplit {
		o.split.at = sw.Duration("split_at", 100*time.Millisecond, 2*time.Second)
		o.split.route = 2
		o.split.key = fmt.Sprintf("k%02d", sw.Enum("split_key", 2, 10))
		o.split.target = 2
		l.lingerOps = sw.Int("linger_ops", 40, 160)
		l.lingerPace = sw.Duration("linger_pace", 100*time.Millisecond, 600*time.Millisecond)
	}
	return o, l
}

// kvFamiliesBesideLists are the internal families the key-value clients of
// lists-migrate use: clientFamilies() without the list families. The list
// rows' writers are listdelta transactions, which the migrate recorder
// does not record (their outcomes are judged by the L.* checkers against
// the list truth), so a latest read or scan of a list row by a key-value
// client would be judged by M.Linearizable against a history that lacks
// every write of that row: "no linearization" of a row nothing recorded
// wrote. Keeping the key-value clients off those families leaves the list
// rows to L.*, and the migration of them to the M.* checkers that watch
// the groups (copy, cleanup, single writer, catalog), which see every row.
func kvFamiliesBesideLists() []keys.Family {
	var out []keys.Family
	for _, f := range clientFamilies() {
		if f != keys.FamilyListMeta && f != keys.FamilyListDelta && f != keys.FamilyListItem && f != keys.FamilyListClaim {
			out = append(out, f)
		}
	}
	return out
}
