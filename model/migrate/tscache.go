package migrate

import (
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
)

// tsCache is a leader's timestamp cache: the highest timestamp at which it
// served a read of each route key (points) or span (scans), above a low
// water mark (the clock when the leadership began: an earlier leader may
// have served anything up to there). A write whose timestamp the caller
// supplied must lie above it, or it would change a snapshot someone already
// read. The span list is bounded; dropping an entry raises the low water.
type tsCache struct {
	low    hlc.TS
	points map[string]hlc.TS
	spans  []spanTS
}

type spanTS struct {
	span keys.Span
	ts   hlc.TS
}

const tsCacheSpans = 64

func newTSCache(low hlc.TS) tsCache { return tsCache{low: low, points: map[string]hlc.TS{}} }

// record notes a read of route-key span s at ts.
func (c *tsCache) record(s keys.Span, ts hlc.TS) {
	if c.points == nil {
		*c = newTSCache(c.low)
	}
	if keys.IsKeyAfter(s.End, s.Start) {
		if ts > c.points[s.Start] {
			c.points[s.Start] = ts
		}
		return
	}
	if len(c.spans) == tsCacheSpans {
		if c.spans[0].ts > c.low {
			c.low = c.spans[0].ts
		}
		c.spans = c.spans[1:]
	}
	c.spans = append(c.spans, spanTS{s, ts})
}

// max returns the highest read timestamp covering route key rk.
func (c *tsCache) max(rk string) hlc.TS {
	m := c.low
	if ts := c.points[rk]; ts > m {
		m = ts
	}
	for _, s := range c.spans {
		if s.ts > m && s.span.Contains(rk) {
			m = s.ts
		}
	}
	return m
}
