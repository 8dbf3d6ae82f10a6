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
// per second of wall time, with allocations per batch, and the process's
// CPU time per seed (garbage collection included), which the load of a
// shared machine does not inflate. Compare two builds
// with `go test -run '^$' -bench Scenario -count 10 ./scenarios/ > new.txt`
// and benchstat.
func BenchmarkScenario(b *testing.B) {
	for _, sc := range All() {
		b.Run(sc.Name, func(b *testing.B) {
			b.ReportAllocs()
			var events uint64
			var virtual int64
			start, cpu := time.Now(), processCPU()
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
			if used := processCPU() - cpu; used > 0 {
				b.ReportMetric(float64(used)/float64(time.Millisecond)/float64(b.N*benchBatch), "cpu-ms/seed")
			}
			b.ReportMetric(float64(b.N*benchBatch)/wall, "seeds/s")
			b.ReportMetric(float64(events)/wall, "events/s")
			b.ReportMetric(float64(virtual)/1e9/wall, "virtual/wall")
		})
	}
}
