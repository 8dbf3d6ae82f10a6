package coordcheck

import (
	"regexp"
	"slices"
	"strings"

	"shardsim/model/coord"
	"shardsim/property"
)

// Seen is what one request's caller learned: whatever the coordinator
// returned to a request scoped to Tenant. The scenario fills in what the
// request kind returns; the rest stays zero.
type Seen struct {
	Tenant    coord.TenantID
	Named     []coord.RunID        // the runs the request itself named (its key, its lease)
	Lease     *coord.Lease         // a granted or renewed lease
	Events    []coord.Event        // the events the operation returned
	Err       string               // the error text, if refused
	Run       coord.RunID          // the run a read asked about
	Summaries []coord.ShardSummary // a listing's answer
	RunRecord *coord.RunRecord     // get_run's answer
}

// CheckAnswer is C.TenantIsolation on what a request saw, judged against
// the durable state s at the time of the answer: a request scoped to
// tenant A must never see tenant B's data, in an answer or an error. It
// flags a lease, event or run record of another tenant; a listing entry
// that is not a shard of the caller's own run; and an error that names
// another tenant or another tenant's run the request did not name itself
// (tenants' run ids are distinct in the worlds, so such a run id in an
// error can only come from a foreign record).
//
// What it cannot see: data of another tenant that happens to equal the
// caller's own (keys of one shared key space, shard ids reused across
// runs), and anything a caller learns from timing.
func CheckAnswer(s *coord.Snapshot, seen Seen) *property.Violation {
	t := seen.Tenant
	leak := func(format string, args ...any) *property.Violation {
		return property.Violated(property.CTenantIsolation, "a request of tenant %.8s… saw "+format, append([]any{t}, args...)...)
	}
	if seen.Lease != nil && seen.Lease.Tenant != t {
		return leak("a lease of tenant %.8s…", seen.Lease.Tenant)
	}
	for _, e := range seen.Events {
		if e.Tenant != t {
			return leak("an event of tenant %.8s…: %s", e.Tenant, e)
		}
	}
	if r := seen.RunRecord; r != nil && r.Tenant != t {
		return leak("the run record of tenant %.8s…", r.Tenant)
	}
	for _, sum := range seen.Summaries {
		if !ownsShard(s, t, seen.Run, sum.Shard) {
			return leak("shard %s in a listing of its run %s, which holds no such shard of its own", sum.Shard, seen.Run)
		}
	}
	if seen.Err != "" {
		named := runInText.FindAllString(seen.Err, -1)
		for i := range s.Runs {
			r := &s.Runs[i]
			if r.Tenant == t {
				continue
			}
			if strings.Contains(seen.Err, r.Tenant.String()) {
				return leak("tenant %.8s… named in an error: %s", r.Tenant, seen.Err)
			}
			if !ownsRun(s, t, r.Run) && !slices.Contains(seen.Named, r.Run) && slices.Contains(named, r.Run.String()) {
				return leak("run %s of tenant %.8s… named in an error: %s", r.Run, r.Tenant, seen.Err)
			}
		}
	}
	return nil
}

// runInText finds the run ids an error names.
var runInText = regexp.MustCompile(`run:[0-9a-f]+`)

func ownsShard(s *coord.Snapshot, t coord.TenantID, run coord.RunID, id coord.ShardID) bool {
	for i := range s.Shards {
		if r := &s.Shards[i]; r.Tenant == t && r.Run == run && r.Shard == id {
			return true
		}
	}
	return false
}

func ownsRun(s *coord.Snapshot, t coord.TenantID, run coord.RunID) bool {
	for i := range s.Runs {
		if s.Runs[i].Tenant == t && s.Runs[i].Run == run {
			return true
		}
	}
	return false
}
