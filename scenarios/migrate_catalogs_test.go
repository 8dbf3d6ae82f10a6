package scenarios

import "testing"

// A world's nodes, coordinators and migrator share the catalogs its decode
// cache holds, so none of them may change one in place: at the end of
// clean runs of every migration scenario, each cached catalog still equals
// a fresh decoding of the bytes it came from.
func TestMigrateCachedCatalogsUnchanged(t *testing.T) {
	runs := []struct {
		scenario string
		kind     migrateKind
		seeds    int
	}{{"migrate", splitOnce, 30}, {"migrate-abandon", splitAbandoned, 10}, {"migrate-stale", splitStale, 10}, {"hotspot", hotspotSplits, 10}}
	compared := 0
	for _, r := range runs {
		for s := 1; s <= r.seeds; s++ {
			cfg := Config{Seed: uint64(s)}
			m, err := newMigrateWorld(r.scenario, r.kind, cfg)
			if err != nil {
				t.Fatal(err)
			}
			m.w.Run()
			n, err := m.env.CheckCatalogCache()
			if err != nil {
				t.Errorf("%s seed %d: %v", r.scenario, s, err)
			}
			compared += n
			m.w.Loop.Close()
		}
	}
	if compared < 60 {
		t.Fatalf("only %d cached catalogs compared", compared)
	}
	t.Logf("%d cached catalogs compared", compared)
}
