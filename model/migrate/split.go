package migrate

import (
	"errors"
	"fmt"

	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/job"
	"shardsim/model/migrate/keys"
	"shardsim/simkv"
)

// Errors of the split API.
var (
	// ErrJobLive: another split job is live (one at a time).
	ErrJobLive = errors.New("migrate: a split job is already live")
	// ErrBadSplit: the route, split key or target group is not acceptable.
	ErrBadSplit = errors.New("migrate: bad split request")
	// ErrTooLate: the job has passed CUTOVER (or ended); it cannot be abandoned.
	ErrTooLate = errors.New("migrate: job can no longer be abandoned")
)

// SplitRequest asks to move [SplitKey, end of route) of RouteID to Target.
type SplitRequest struct {
	RouteID  uint64
	SplitKey string
	Target   int
	NowMs    int64 // recorded as the job's creation time
}

// SplitRange is the manual split API: it validates the request against the
// current catalog and creates a PLANNED job, atomically with the live-job
// pointer and the id allocator, so two callers cannot both start one. It
// returns the new job's id. Transport errors are returned as they come; an
// indeterminate create is resolved by reading back.
func SplitRange(kv simkv.KV, req SplitRequest) (uint64, error) {
	cat, catRev, err := LoadCatalog(kv)
	if err != nil {
		return 0, err
	}
	r, ok := cat.Route(req.RouteID)
	if !ok || r.State != catalog.Active || r.StagedVisible || !keys.ValidUserKey(req.SplitKey) ||
		!r.Span().Contains(req.SplitKey) || req.SplitKey == r.Start || req.Target == r.Group || req.Target < 0 {
		return 0, fmt.Errorf("%w: route %d at %q to g%d in %s", ErrBadSplit, req.RouteID, req.SplitKey, req.Target, cat)
	}
	liveB, liveRev, err := getKeyBytes(kv, liveJobKey)
	if err != nil {
		return 0, err
	}
	if job.DecodeID(liveB) != 0 {
		return 0, ErrJobLive
	}
	nextB, nextRev, err := getKey(kv, job.NextJobIDKey)
	if err != nil {
		return 0, err
	}
	id := job.DecodeID(nextB) + 1
	j := job.SplitJob{
		ID: id, SourceRouteID: r.ID, SourceGroup: r.Group, TargetGroup: req.Target,
		SplitKey: req.SplitKey, SourceStart: r.Start, MovingEnd: r.End, Phase: job.Planned, CreatedAtMs: req.NowMs, Writes: 1,
	}
	var ps putSet
	ps.put(job.Key(id), j.Encode())
	ps.put(job.LiveJobKey, job.EncodeID(id))
	ps.put(job.NextJobIDKey, job.EncodeID(id))
	_, err = commit(kv, []guard{{job.CatalogKey, catRev}, {job.LiveJobKey, liveRev}, {job.NextJobIDKey, nextRev}},
		ps.list(), nil, job.Key(id), j.Encode())
	if errors.Is(err, errConflict) {
		return 0, ErrJobLive
	}
	return id, err
}

// AbandonSplitJob asks to abandon job id: it moves the job to ABANDONING
// (remembering the phase it left) if it has not reached CUTOVER; the
// migrator then removes the staged data and the fence.
func AbandonSplitJob(kv simkv.KV, id uint64) error {
	for {
		j, rev, err := LoadJob(kv, id)
		if err != nil {
			return err
		}
		if rev == 0 {
			return ErrTooLate // ended and moved to history
		}
		if j.Phase == job.Abandoning {
			return nil
		}
		from := j.Phase
		if from == job.Failed {
			from = j.RetryPhase
		}
		if !job.Allowed(j.Phase, job.Abandoning, j.RetryPhase) {
			return ErrTooLate
		}
		// j is this attempt's own decoded copy (a retry loads the job
		// again): it is changed in place, no clone needed.
		j.Phase, j.AbandonFromPhase, j.RetryPhase = job.Abandoning, from, 0
		j.Writes++
		k, v := job.Key(id), j.Encode()
		_, err = commit(kv, []guard{{k, rev}}, []keyPut{{k, v}}, nil, k, v)
		if errors.Is(err, errConflict) {
			continue // the migrator moved it; look again
		}
		return err
	}
}
