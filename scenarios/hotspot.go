package scenarios

import (
	"fmt"
	"time"

	"shardsim/model/migrate"
	"shardsim/nemesis"
)

func init() {
	Register(Scenario{
		Name:        "hotspot",
		Description: "a skewed load makes the hotspot detector choose when and where to split and which group receives the moving half, under the same faults as migrate",
		Properties:  migrateProperties,
		Run:         func(cfg Config) (Result, error) { return runMigrate("hotspot", hotspotSplits, cfg) },
	})
}

// hotspotOptions sets up the hotspot scenario: the detector on, with its
// thresholds scaled to a simulated second (the design's one-minute windows
// and 50,000 ops/min would need far longer runs), and a workload skewed to
// one to three hot keys. It returns how many more operations each client
// runs than in migrate.
func hotspotOptions(sw *nemesis.Swarm, pcfg *migrate.Config, wl *migrateWorkload) int {
	pcfg.Detect = true
	pcfg.Detector.Window = 300 * time.Millisecond
	pcfg.Detector.Threshold = sw.Int("hot_threshold", 10, 35)
	pcfg.Detector.Cooldown = time.Second
	pcfg.Detector.MinSamples = sw.Int("hot_min_samples", 4, 30)
	hot := sw.Enum("hot_keys", 1, 3)
	first := sw.Enum("hot_first", 1, 11-hot)
	for i := 0; i < hot; i++ {
		wl.hot = append(wl.hot, fmt.Sprintf("k%02d", first+i))
	}
	wl.hotShare = sw.Rate("hot_share", 1, 0.5, 0.95)
	wl.pace = 60 * time.Millisecond
	return 60
}
