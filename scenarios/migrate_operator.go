package scenarios

import (
	"errors"
	"time"

	"shardsim/model/migrate"
	"shardsim/model/migrate/job"
	"shardsim/simclock"
	"shardsim/simkv"
)

// migrateOperator is the person at the manual split API: at the planned time it
// asks for the split; in migrate-abandon it watches the job and asks to
// abandon it once it reached the planned phase.
type migrateOperator struct {
	m  *migrateWorld
	id uint64
}

// Receive implements simclock.Actor.
func (o *migrateOperator) Receive(ctx *simclock.Context, msg any) {
	if _, ok := msg.(simclock.Started); !ok {
		return
	}
	client := o.m.meta.Connect(ctx.Self())
	p := o.m.opts.split
	ctx.Go("operator", func(t *simclock.Task) {
		kv := client.In(t)
		t.Sleep(p.at)
		for o.id == 0 {
			id, err := migrate.SplitRange(kv, migrate.SplitRequest{RouteID: p.route, SplitKey: p.key, Target: p.target, NowMs: int64(t.Local()) / 1e6})
			switch {
			case err == nil:
				o.id = id
			case errors.Is(err, migrate.ErrJobLive) || simkv.IsTransport(err):
				// A lost answer may have created it: the live job tells.
				if j, _, ok, lerr := migrate.LiveJob(kv); lerr == nil && ok {
					o.id = j.ID
				}
				t.Sleep(20 * time.Millisecond)
			default:
				ctx.Rec("operator.split-failed").Err("err", err).End()
				o.m.opDone = true
				return
			}
		}
		ctx.Rec("operator.split").Uint("job", uint64(o.id)).End()
		if p.abandonAt != 0 {
			o.abandon(t, kv, p.abandonAt)
		}
		o.m.opDone = true
	})
}

// abandon polls the job until it reaches phase at, then abandons it.
func (o *migrateOperator) abandon(t *simclock.Task, kv simkv.KV, at job.Phase) {
	for {
		j, rev, err := migrate.LoadJob(kv, o.id)
		if err != nil {
			t.Sleep(5 * time.Millisecond)
			continue
		}
		if rev == 0 || j.Phase == job.Abandoning || j.Phase >= job.Cutover && j.Phase != job.Failed {
			t.Context().Rec("operator.abandon-late").Uint("job", uint64(o.id)).Str("phase", j.Phase.String()).End()
			o.m.w.Count("abandon_late", 1)
			return
		}
		if j.Phase >= at || j.Phase == job.Failed {
			err := migrate.AbandonSplitJob(kv, o.id)
			switch {
			case err == nil:
				t.Context().Rec("operator.abandon").Uint("job", uint64(o.id)).Str("from", j.Phase.String()).End()
				o.m.w.Count("abandoned", 1)
				return
			case errors.Is(err, migrate.ErrTooLate):
				o.m.w.Count("abandon_late", 1)
				return
			}
		}
		t.Sleep(5 * time.Millisecond)
	}
}
