// Package hotspot decides when and where to split a route: per window it
// scores each route's load (writes weigh more than reads), makes a route a
// candidate after enough consecutive windows over the threshold, cools a
// split route down, and picks the split key from sampled keys (the median,
// or the hot key itself when one key carries most of the load). Without
// enough samples it declines rather than split at a blind midpoint.
package hotspot

import (
	"fmt"
	"sort"
	"time"

	"shardsim/model/migrate/keys"
	"shardsim/simclock"
)

// Config holds the detector's thresholds.
type Config struct {
	Window      time.Duration // length of one observation window
	Threshold   int           // score per window above which a route is hot
	WriteWeight int
	ReadWeight  int
	Consecutive int           // hot windows in a row before a route is a candidate
	Cooldown    time.Duration // no new split of a route this long after one
	HotKeyShare float64       // a key with at least this share of samples is isolated
	MinSamples  int           // fewer sampled accesses: no evidence, decline
}

// DefaultConfig is the design's setting: a one-minute window, 50,000
// (score) per minute, writes x4, reads x1, three windows, ten minutes of
// cooldown, isolate a key with 80% of the load.
func DefaultConfig() Config {
	return Config{
		Window: time.Minute, Threshold: 50_000, WriteWeight: 4, ReadWeight: 1,
		Consecutive: 3, Cooldown: 10 * time.Minute, HotKeyShare: 0.8, MinSamples: 32,
	}
}

// KeyCount is one sampled route key and its access count.
type KeyCount struct {
	Key   string
	Count int
}

// Load is one route's load in one window.
type Load struct {
	RouteID    uint64
	Span       keys.Span
	Reads      int
	Writes     int
	Samples    []KeyCount
	Splittable bool // the route may be split now (Active, no job on it)
}

// Decision is the detector's verdict on a candidate route.
type Decision struct {
	RouteID  uint64
	Span     keys.Span
	Score    int
	SplitKey string // "" when declined
	Isolate  bool   // the split isolates a hot key
	Reason   string
}

// Detector keeps the per-route streaks and cooldowns.
type Detector struct {
	cfg      Config
	streak   map[uint64]int
	coolTill map[uint64]simclock.Time
}

// New returns a detector.
func New(cfg Config) *Detector {
	return &Detector{cfg: cfg, streak: map[uint64]int{}, coolTill: map[uint64]simclock.Time{}}
}

// Config returns the configuration.
func (d *Detector) Config() Config { return d.cfg }

// Score returns a load's weighted score.
func (d *Detector) Score(l Load) int { return l.Writes*d.cfg.WriteWeight + l.Reads*d.cfg.ReadWeight }

// Observe folds one window's loads (any order) into the streaks and
// returns a decision for every candidate route, in route id order: a split
// key, or a decline with its reason.
func (d *Detector) Observe(now simclock.Time, loads []Load) []Decision {
	loads = append([]Load(nil), loads...)
	sort.Slice(loads, func(i, j int) bool { return loads[i].RouteID < loads[j].RouteID })
	var out []Decision
	for _, l := range loads {
		score := d.Score(l)
		if score <= d.cfg.Threshold {
			d.streak[l.RouteID] = 0
			continue
		}
		d.streak[l.RouteID]++
		if d.streak[l.RouteID] < d.cfg.Consecutive || now < d.coolTill[l.RouteID] || !l.Splittable {
			continue
		}
		dec := Decision{RouteID: l.RouteID, Span: l.Span, Score: score}
		dec.SplitKey, dec.Isolate, dec.Reason = d.splitKey(l)
		out = append(out, dec)
	}
	return out
}

// Split records that route id was split at now (both halves cool down).
func (d *Detector) Split(now simclock.Time, ids ...uint64) {
	for _, id := range ids {
		d.coolTill[id] = now.Add(d.cfg.Cooldown)
		d.streak[id] = 0
	}
}

// splitKey picks where to split a candidate, or says why not.
func (d *Detector) splitKey(l Load) (string, bool, string) {
	var samples []KeyCount
	total := 0
	for _, s := range l.Samples {
		if s.Count > 0 && l.Span.Contains(s.Key) {
			samples = append(samples, s)
			total += s.Count
		}
	}
	if total < d.cfg.MinSamples {
		return "", false, fmt.Sprintf("declined: %d sampled accesses, need %d", total, d.cfg.MinSamples)
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i].Key < samples[j].Key })
	top := samples[0]
	for _, s := range samples[1:] {
		if s.Count > top.Count {
			top = s
		}
	}
	inside := func(k string) bool { return k > l.Span.Start && l.Span.Contains(k) }
	if float64(top.Count) >= d.cfg.HotKeyShare*float64(total) {
		// Isolate the hot key: split right above it when it starts the
		// route, else right at it.
		if k := top.Key; inside(k) {
			return k, true, fmt.Sprintf("isolate %q (%d of %d)", k, top.Count, total)
		}
		if k := keys.KeyAfter(top.Key); inside(k) {
			return k, true, fmt.Sprintf("isolate %q above it (%d of %d)", top.Key, top.Count, total)
		}
		return "", false, fmt.Sprintf("declined: hot key %q already alone", top.Key)
	}
	// The weighted median, moved up to the next sample if it is the start.
	acc := 0
	for i, s := range samples {
		acc += s.Count
		if 2*acc < total {
			continue
		}
		for _, c := range samples[i:] {
			if inside(c.Key) {
				return c.Key, false, fmt.Sprintf("p50 of %d sampled accesses", total)
			}
		}
		break
	}
	return "", false, "declined: no sampled key splits the route"
}
