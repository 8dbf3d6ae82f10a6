package migrate

import (
	"errors"
	"fmt"

	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/hotspot"
	"shardsim/model/migrate/job"
	"shardsim/simclock"
	"shardsim/simkv"
)

// startDetector runs the hotspot detector on the group-0 leader: every
// window it collects each group leader's access counters, scores the
// routes and, for a candidate, asks the split API for a job moving the
// upper part to the least loaded other group. Its streaks are leader-local;
// its cooldowns are rebuilt from the job records, so a new leader does not
// split a route it just split.
func (n *Node) startDetector(ls *leader) {
	n.ctx.Go("detector", func(t *simclock.Task) {
		kv := n.meta.In(t)
		det := hotspot.New(n.env.Cfg.Detector)
		seeded := false
		for n.leads(0) == ls {
			t.Sleep(det.Config().Window)
			if n.leads(0) != ls {
				return
			}
			if !seeded {
				seeded = seedCooldowns(kv, det) == nil
			}
			n.detectOnce(t, kv, det)
		}
	})
}

// seedCooldowns cools down the routes of live and recent jobs.
func seedCooldowns(kv simkv.KV, det *hotspot.Detector) error {
	r, err := kv.Range(simkv.RangeRequest{Key: []byte("!dist|job"), RangeEnd: []byte("!dist|joc")})
	if err != nil {
		return err
	}
	for _, e := range r.Kvs {
		j, err := job.Decode(e.Value)
		if err != nil {
			continue
		}
		det.Split(simclock.Time(j.CreatedAtMs*1e6), j.SourceRouteID, j.MovingRouteID)
	}
	return nil
}

func (n *Node) detectOnce(t *simclock.Task, kv simkv.KV, det *hotspot.Detector) {
	cat, _, err := LoadCatalog(kv)
	if err != nil {
		return
	}
	_, _, live, err := LiveJob(kv)
	if err != nil {
		return
	}
	loads := map[uint64]*hotspot.Load{}
	score := make([]int, n.env.Cluster.Groups())
	for g := 0; g < n.env.Cluster.Groups(); g++ {
		r, err := n.env.Net.Call(t, g, AccessReq{})
		if err != nil {
			continue // a lost report just weakens the evidence
		}
		for _, ra := range r.(AccessResp).Routes {
			route, ok := cat.Route(ra.RouteID)
			if !ok || route.Group != g {
				continue
			}
			l := loads[ra.RouteID]
			if l == nil {
				l = &hotspot.Load{RouteID: ra.RouteID, Span: route.Span(),
					Splittable: !live && route.State == catalog.Active && !route.StagedVisible}
				loads[ra.RouteID] = l
			}
			l.Reads += ra.Reads
			l.Writes += ra.Writes
			for _, kc := range ra.Keys {
				l.Samples = append(l.Samples, hotspot.KeyCount{Key: kc.Key, Count: kc.Count})
			}
			score[g] += det.Score(*l)
		}
	}
	var list []hotspot.Load
	for _, r := range cat.Routes { // catalog order, not map order
		if l := loads[r.ID]; l != nil {
			list = append(list, *l)
		}
	}
	now := t.Local()
	for _, d := range det.Observe(now, list) {
		if d.SplitKey == "" {
			t.Context().Log("hotspot.decline", fmt.Sprintf("r%d score=%d %s", d.RouteID, d.Score, d.Reason))
			if h := n.env.Hooks.Detected; h != nil {
				h(d, 0)
			}
			continue
		}
		src, _ := cat.Route(d.RouteID)
		target := -1
		for g := range score {
			if g != src.Group && (target < 0 || score[g] < score[target]) {
				target = g
			}
		}
		id, err := SplitRange(kv, SplitRequest{RouteID: d.RouteID, SplitKey: d.SplitKey, Target: target, NowMs: int64(now) / 1e6})
		if err != nil {
			if !errors.Is(err, ErrJobLive) {
				t.Context().Log("hotspot.split-failed", err.Error())
			}
			continue
		}
		det.Split(now, d.RouteID)
		if h := n.env.Hooks.Detected; h != nil {
			h(d, id)
		}
		t.Context().Log("hotspot.split", fmt.Sprintf("j%d r%d at %q -> g%d score=%d %s", id, d.RouteID, d.SplitKey, target, d.Score, d.Reason))
		return // one job at a time
	}
}
