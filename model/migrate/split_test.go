package migrate

import (
	"errors"
	"testing"

	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/job"
	"shardsim/simkv"
)

func metaStore(t *testing.T) *simkv.Direct {
	t.Helper()
	cat := catalog.Catalog{Version: 1, NextRouteID: 3, Routes: []catalog.Route{
		{ID: 1, Start: "", End: "k", Group: 0},
		{ID: 2, Start: "k", End: "", Group: 1},
	}}
	d := simkv.NewDirect(simkv.NewStore(simkv.StoreConfig{}), 0)
	if _, err := d.Put(simkv.PutRequest{Key: []byte(job.CatalogKey), Value: cat.Encode()}); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestSplitRangeValidatesAndAllowsOneLiveJob(t *testing.T) {
	kv := metaStore(t)
	for name, req := range map[string]SplitRequest{
		"unknown route":      {RouteID: 9, SplitKey: "k5", Target: 2},
		"key outside":        {RouteID: 2, SplitKey: "a", Target: 2},
		"key at the start":   {RouteID: 2, SplitKey: "k", Target: 2},
		"same group":         {RouteID: 2, SplitKey: "k5", Target: 1},
		"separator in key":   {RouteID: 2, SplitKey: "k5\x00", Target: 2},
		"local keyspace key": {RouteID: 1, SplitKey: "!dist|x", Target: 2},
	} {
		if _, err := SplitRange(kv, req); !errors.Is(err, ErrBadSplit) {
			t.Errorf("%s: %v", name, err)
		}
	}
	id, err := SplitRange(kv, SplitRequest{RouteID: 2, SplitKey: "k5", Target: 2, NowMs: 7})
	if err != nil || id != 1 {
		t.Fatalf("split: %d %v", id, err)
	}
	if _, err := SplitRange(kv, SplitRequest{RouteID: 1, SplitKey: "b", Target: 2}); !errors.Is(err, ErrJobLive) {
		t.Fatalf("a second live job: %v", err)
	}
	j, _, ok, err := LiveJob(kv)
	if err != nil || !ok || j.Phase != job.Planned || j.Moving().Start != "k5" || j.Moving().End != "" || j.CreatedAtMs != 7 {
		t.Fatalf("live job %+v %v %v", j, ok, err)
	}
}

func TestAbandonOnlyBeforeCutover(t *testing.T) {
	kv := metaStore(t)
	id, _ := SplitRange(kv, SplitRequest{RouteID: 2, SplitKey: "k5", Target: 2})
	if err := AbandonSplitJob(kv, id); err != nil {
		t.Fatal(err)
	}
	j, _, _ := LoadJob(kv, id)
	if j.Phase != job.Abandoning || j.AbandonFromPhase != job.Planned {
		t.Fatalf("abandoned job %s", j)
	}
	if err := AbandonSplitJob(kv, id); err != nil {
		t.Fatalf("abandon twice: %v", err)
	}
	// A job past CUTOVER cannot be abandoned.
	j.Phase, j.AbandonFromPhase = job.Cutover, 0
	if _, err := kv.Put(simkv.PutRequest{Key: []byte(job.Key(id)), Value: j.Encode()}); err != nil {
		t.Fatal(err)
	}
	if err := AbandonSplitJob(kv, id); !errors.Is(err, ErrTooLate) {
		t.Fatalf("abandon after cutover: %v", err)
	}
	if err := AbandonSplitJob(kv, 99); !errors.Is(err, ErrTooLate) {
		t.Fatalf("abandon of an unknown job: %v", err)
	}
}
