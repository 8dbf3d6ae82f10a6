package tlatrace

import (
	"sort"

	"shardsim/model/migrate/hlc"
)

// migRanks maps raw keys and timestamps to their ranks (from 1) among
// every key and timestamp the trace names; timestamp 0 stays 0.
type migRanks struct {
	keys map[string]int64
	ts   map[hlc.TS]int64
}

func (m *Migration) ranks() migRanks {
	keySet, tsSet := map[string]bool{}, map[hlc.TS]bool{}
	addVers := func(vs []ver) {
		for _, v := range vs {
			keySet[v.key], tsSet[v.ts] = true, true
		}
	}
	for _, e := range m.events {
		addVers(e.rows)
		for i := range e.add {
			addVers(e.add[i])
			addVers(e.del[i])
		}
		for _, t := range []hlc.TS{e.ts, e.tfloor, e.job.snap, e.job.fence, e.job.low, e.job.maxImp} {
			tsSet[t] = true
		}
	}
	delete(tsSet, 0)
	r := migRanks{keys: map[string]int64{}, ts: map[hlc.TS]int64{0: 0}}
	var ks []string
	for k := range keySet {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for i, k := range ks {
		r.keys[k] = int64(i + 1)
	}
	var ts []hlc.TS
	for t := range tsSet {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	for i, t := range ts {
		r.ts[t] = int64(i + 1)
	}
	delete(r.ts, 0)
	r.ts[0] = 0
	return r
}

func (r migRanks) t(ts hlc.TS) value { return num(r.ts[ts]) }

func (r migRanks) vers(vs []ver) value {
	out := make([]value, len(vs))
	for i, v := range vs {
		out[i] = tuple(num(r.keys[v.key]), r.t(v.ts))
	}
	return set(out...)
}

func (r migRanks) job(j jobView) value {
	return record(field{"snap", r.t(j.snap)}, field{"fence", r.t(j.fence)}, field{"low", r.t(j.low)},
		field{"maxImp", r.t(j.maxImp)}, field{"rf", str(j.rf)}, field{"allDone", boolean(j.allDone)},
		field{"retry", str(j.retry)}, field{"cut", boolean(j.cut)}, field{"cleared", boolean(j.cleared)},
		field{"cleaned", boolean(j.cleaned)})
}

func (r migRanks) event(e migEvent) value {
	routes := make([]value, len(e.routes))
	for i, rt := range e.routes {
		routes[i] = record(field{"g", str(rt.g)}, field{"st", str(rt.st)}, field{"stg", boolean(rt.staged)})
	}
	return record(field{"act", str(e.act)}, field{"g", str(e.g)}, field{"rows", r.vers(e.rows)},
		field{"pass", num(int64(e.pass))}, field{"ts", r.t(e.ts)},
		field{"ph", str(e.phase)}, field{"job", r.job(e.job)}, field{"routes", set(routes...)},
		field{"tfloor", r.t(e.tfloor)}, field{"armed", boolean(e.armed)}, field{"prom", boolean(e.prom)},
		field{"cleaned", boolean(e.cleaned)},
		field{"srcAdd", r.vers(e.add[0])}, field{"srcDel", r.vers(e.del[0])},
		field{"tgtAdd", r.vers(e.add[1])}, field{"tgtDel", r.vers(e.del[1])},
		field{"stgAdd", r.vers(e.add[2])}, field{"stgDel", r.vers(e.del[2])})
}
