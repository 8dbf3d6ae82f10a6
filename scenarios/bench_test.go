package scenarios

import (
	"testing"
	"time"
)

// benchBatch is how many consecutive seeds one benchmark iteration runs.
// Seeds differ in cost, so an iteration is a fixed batch of them rather than
// one seed: every iteration then does the same work, and ns/op is stable
// enough for benchstat to compare two builds.
const benchBatch = 16

// BenchmarkScenario runs every registered scenario (with every bug off) over
// seeds 1..benchBatch per iteration, as `simrun sweep -parallel 1` does, and
// reports the sweep's figures: seeds/s, events/s and virtual time simulated
// per second of wall time, with allocations per batch. Compare two builds
// with `go test -run '^$' -bench Scenario -count 10 ./scenarios/ > new.txt`
// and benchstat.
func BenchmarkScenario(b *testing.B) {
	for _, sc := range All() {
		b.Run(sc.Name, func(b *testing.B) {
			b.ReportAllocs()
			var events uint64
			var virtual int64
			start := time.Now()
			for i := 0; i < b.N; i++ {
				for s := uint64(1); s <= benchBatch; s++ {
					res, err := sc.Run(Config{Seed: s})
					if err != nil {
						b.Fatal(err)
					}
					if res.Property != "" {
						b.Fatalf("seed %d: %s: %s", s, res.Property, res.Detail)
					}
					events += res.Events
					virtual += res.VirtualNs
				}
			}
			wall := time.Since(start).Seconds()
			if wall <= 0 {
				return
			}
			b.ReportMetric(float64(b.N*benchBatch)/wall, "seeds/s")
			b.ReportMetric(float64(events)/wall, "events/s")
			b.ReportMetric(float64(virtual)/1e9/wall, "virtual/wall")
		})
	}
}
