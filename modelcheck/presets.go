package modelcheck

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Preset is a search a user can run without thinking: the scenario
// options that make its world small enough to explore, and the bounds of
// the exploration. Flags override any part of it.
type Preset struct {
	Name     string
	About    string            // what the preset explores, in a sentence
	Options  map[string]string // scenario option overrides (simrun -opt)
	Bounds   Bounds
	Strategy Strategy
}

// Defaults are the bounds of a search with no preset.
var Defaults = Bounds{Depth: 2, Values: 2, Faults: -1, Branch: NotSwarm}

// NotSwarm branches every fork but the swarm's: a search explores one
// world's runs, not the option space (which -opt and the presets set).
var NotSwarm = Forks{"*"}.without("swarm")

// without is a pattern list that excludes some exact fork names; it is
// kept as a list of patterns plus exclusions, written "*,-swarm".
func (f Forks) without(names ...string) Forks {
	out := append(Forks(nil), f...)
	for _, n := range names {
		out = append(out, "-"+n)
	}
	return out
}

// coordRates switch on every workload habit and worker stall of the
// coordination worlds: under a search, a chance's value only decides
// whether the draw can say yes, and the search tries both answers.
// The claim cooldown is on, two units (a lease of the small world), so that
// one worker's second claim in a tenant soon after its first meets it (at
// one unit none did within depth 1); at five units, longer than two such
// leases, the search no longer found coord.no-fence-check. The
// admin may end a run with shards in flight (abort), so that what an ended
// run must refuse is tried.
// The values lie inside the ranges sweeps draw from, so a witness replays
// in a world like any sweep's, with one exception: stale_unpark is 1 (and
// the sizes of coordSmallWorld, below, are smaller than any sweep's).
//
// stale_unpark is the admin's unpark, from memory, of a shard it once saw
// parked, when it closes the shard's run (by then the shard is done). As a
// chance it cost a draw of its own: a worker's park, the slip and its kind
// (whose zero is another tenant's scope, refused before the Done check) are
// three non-zero draws, one more than depth 2, so coord.unpark-done and
// coord.unpark-bumps-first went unfound. At 1 the slip needs no draw,
// whenever a parked shard was seen: a park and the slip's kind are two.
// admin_mistakes=1 finds them too (the lead measured depth 2), but then
// every admin mistake happens in every run and the admin never registers,
// ends or closes a run the right way; stale_unpark touches nothing else.
// What the search gives up: a run whose admin saw a shard parked and closes
// the run without the stale unpark, which differs from the run with it by
// one call a correct coordinator refuses.
var coordRates = map[string]string{
	"split": "0.1", "park": "0.02", "mistakes": "0.02", "admin_mistakes": "0.1",
	"list_acquire": "0.3", "sticky": "0.3", "stall": "0.01",
	"unpark_budget": "1", "cooldown": "true", "cooldown_units": "2", "abort": "0.04",
	"stale_unpark": "1",
}

// coordSmallWorld is the world of the small and medium coordination
// presets: two tenants with one one-shard run each, two workers of two
// slots. A shard has four keys (sweeps: 8 to 24) and a lease two units
// (sweeps: 10 to 20). A slot renews once half its lease is gone by its
// clock; with four keys a ten-unit lease never got there (no renew in any
// run of the search, so coord.renew-misreports went unfound): the quiet
// run's task is done within one unit (at two units it renews with eight
// keys, not with four). The lease shrinks with the shard: five times under
// the sweeps' shortest, as the keys are two to six times under theirs. A
// slow step of work (one draw) now takes a task past half its lease and it
// renews, as tasks of the sweeps' bigger shards do.
var coordSmallWorld = map[string]string{
	"tenants": "2", "runs": "1", "shards": "1", "keys": "4", "workers": "2", "slots": "2", "lease_units": "2",
}

// coordMenu is the longest menu of the coordination worlds' picks (a
// residual split's ten kinds of mistake) with room to spare: every entry
// of every menu is within reach.
const coordMenu = 12

// presets lists each scenario's presets, smallest first.
var presets = map[string][]Preset{
	"coord": {
		{
			Name: "small",
			About: "two tenants with one one-shard run each (four keys), two workers of two task slots, a two-unit lease; " +
				"workload habits, stalls, runs ended early and the claim cooldown on, network and process faults off; every decision of the workers " +
				"and the admin branches (every entry of a menu), two of them per run",
			Options:  with(coordRates, coordSmallWorld),
			Bounds:   Bounds{Depth: 2, Values: 2, Menu: coordMenu, Faults: -1, Branch: Forks{"worker/*", "admin"}},
			Strategy: BFS,
		},
		{
			Name: "medium",
			About: "the small world with lost requests and answers, pauses and crashes, and the order of " +
				"simultaneous events, the network and the nemesis branching too; three non-zero choices per run, at most one a fault",
			Options: with(coordRates, coordSmallWorld, map[string]string{
				"lose_request": "0.01", "lose_response": "0.01", "pause": "0.02", "crash": "0.02"}),
			Bounds: Bounds{Depth: 3, Values: 2, Menu: coordMenu, Faults: 1, Branch: Forks{"worker/*", "admin", "loop/order", "kv.net", "nemesis"},
				Fault: Forks{"kv.net", "nemesis"}},
			Strategy: BFS,
		},
	},
	"kv": {
		{
			Name: "small",
			About: "two clients of four operations each on two keys, requests and answers lost; every draw but the " +
				"swarm's branches (operations, keys, the network, the order of simultaneous events), two of them per run",
			Options:  map[string]string{"clients": "2", "ops_per_client": "4", "keys": "2", "lose_request": "0.02", "lose_response": "0.02"},
			Bounds:   Bounds{Depth: 2, Values: 3, Faults: -1, Branch: NotSwarm},
			Strategy: BFS,
		},
		{
			Name:     "medium",
			About:    "the small world with delays, leases and compaction, three non-zero draws per run",
			Options:  map[string]string{"clients": "2", "ops_per_client": "4", "keys": "2", "lose_request": "0.02", "lose_response": "0.02", "delay": "0.02", "leases": "true", "compact": "true"},
			Bounds:   Bounds{Depth: 3, Values: 3, Faults: -1, Branch: NotSwarm},
			Strategy: BFS,
		},
	},
	"migrate": {
		{
			Name: "small",
			About: "one client of four operations while a split moves half of route 2 to group 2; the client's " +
				"decisions (operation, key, family, version, timing) and the bootstrap data branch, two of them per run",
			Options:  migrateRates,
			Bounds:   Bounds{Depth: 2, Values: 2, Faults: -1, Branch: Forks{"workload/*", "bootstrap"}},
			Strategy: BFS,
		},
		{
			Name: "medium",
			About: "the small world, three non-zero draws per run, with the order of simultaneous events " +
				"branching too",
			Options:  migrateRates,
			Bounds:   Bounds{Depth: 3, Values: 2, Faults: -1, Branch: Forks{"workload/*", "bootstrap", "loop/order"}},
			Strategy: BFS,
		},
	},
	"migrate-abandon": {
		{
			Name:     "small",
			About:    "the migrate small world with the split abandoned in FENCE",
			Options:  with(migrateRates, map[string]string{"abandon_phase": "3"}),
			Bounds:   Bounds{Depth: 2, Values: 2, Faults: -1, Branch: Forks{"workload/*", "bootstrap"}},
			Strategy: BFS,
		},
	},
}

// migrateRates switch the migration clients' habits on (internal-family
// rows, writes without a catalog version, TTLs) in a one-client world.
//
// client_rest_until splits the client's operations around the migration.
// The migrator picks the job up at its 200ms poll and, in the quiet run,
// goes BACKFILL at 202.5ms, FENCE 211.4, DELTA_COPY 213.8, CUTOVER 225.8,
// target promotion done 273.8, DONE 343.1; the client (a pace draw of up to
// 100ms between operations) was done by 6ms, so a write during the
// migration took two pace draws besides the write and its key, and
// migrate.promote-skips-shadowed (a write on the target after CUTOVER,
// before promotion) went unfound in a complete depth-2 search. With the
// client's first operation at 0 and its next ones from 230ms, a write and
// its key (two draws) land before the export (migrate.key-only-cursor) or
// between CUTOVER and promotion (migrate.promote-skips-shadowed). A start
// of 230ms for every operation found the second and lost the first.
var migrateRates = map[string]string{
	"clients": "1", "ops_per_client": "4", "internal_keys": "0.3", "unversioned_writes": "0.3", "ttl_writes": "0.1",
	"client_rest_until": "230ms",
}

// with returns a merged copy of option maps (later ones win).
func with(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		maps.Copy(out, m)
	}
	return out
}

// LookupPreset returns the named preset of a scenario.
func LookupPreset(scenario, name string) (Preset, error) {
	for _, p := range presets[scenario] {
		if p.Name == name {
			p.Options = maps.Clone(p.Options)
			return p, nil
		}
	}
	names := PresetNames(scenario)
	if len(names) == 0 {
		return Preset{}, fmt.Errorf("scenario %s has no presets (give the bounds as flags)", scenario)
	}
	return Preset{}, fmt.Errorf("scenario %s has no preset %q (it has %s)", scenario, name, strings.Join(names, ", "))
}

// PresetNames lists a scenario's presets, smallest first.
func PresetNames(scenario string) []string {
	var out []string
	for _, p := range presets[scenario] {
		out = append(out, p.Name)
	}
	return out
}

// PresetScenarios lists the scenarios that have presets.
func PresetScenarios() []string { return slices.Sorted(maps.Keys(presets)) }
