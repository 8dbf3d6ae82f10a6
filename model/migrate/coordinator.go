package migrate

import (
	"time"

	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/job"
	"shardsim/model/migrate/keys"
	"shardsim/simclock"
	"shardsim/simkv"
)

// Coordinator routes a client's requests by its own catalog view, which a
// watcher on the metadata store moves forward (never back) after a lag,
// and stamps the view's version on the writes it sends. It rejects writes
// to WriteFenced routes itself (the group checks again at apply time) and
// retries requests that certainly did not apply, refreshing its view when
// the group says the route moved.
type Coordinator struct {
	env      *Env
	name     string
	view     catalog.Catalog
	client   *simkv.Client
	choices  *simclock.Choices
	maxLag   time.Duration
	attempts int
	lastRev  int64
	// OnView, if set, is told every version the view moves to.
	OnView func(name string, version uint64)
}

// NewCoordinator returns a coordinator whose view starts at initial and
// whose watcher applies each snapshot after a lag of up to maxLag.
func NewCoordinator(env *Env, name string, initial catalog.Catalog, choices *simclock.Choices, maxLag time.Duration) *Coordinator {
	return &Coordinator{env: env, name: name, view: initial.Clone(), choices: choices, maxLag: maxLag, attempts: 8}
}

// View returns the coordinator's catalog view.
func (c *Coordinator) View() catalog.Catalog { return c.view }

// Start connects the coordinator's watcher for the actor behind ctx.
func (c *Coordinator) Start(ctx *simclock.Context) {
	c.client = c.env.Meta.Connect(ctx.Self())
	c.watch(ctx)
}

func (c *Coordinator) watch(ctx *simclock.Context) {
	c.client.Watch(ctx, simkv.WatchRequest{Key: []byte(job.CatalogKey), StartRevision: c.lastRev + 1},
		func(ctx *simclock.Context, r simkv.WatchResponse) {
			for _, e := range r.Events {
				if e.Type != simkv.EventPut {
					continue
				}
				c.lastRev = e.Kv.ModRevision
				cat, err := catalog.Decode(e.Kv.Value)
				if err != nil {
					continue
				}
				ctx.Defer(c.choices.Duration(0, c.maxLag), func(*simclock.Context) { c.adopt(cat) })
			}
		},
		func(ctx *simclock.Context, err error) {
			ctx.Defer(50*time.Millisecond, func(ctx *simclock.Context) { c.watch(ctx) })
		})
}

// adopt moves the view forward to cat (older snapshots are ignored).
func (c *Coordinator) adopt(cat catalog.Catalog) {
	if cat.Version <= c.view.Version {
		return
	}
	c.view = cat
	if c.OnView != nil {
		c.OnView(c.name, cat.Version)
	}
}

// refresh reads the catalog from the metadata store (a stale route).
func (c *Coordinator) refresh(t *simclock.Task) {
	if cat, _, err := LoadCatalog(c.client.In(t)); err == nil {
		c.adopt(cat)
	}
}

func (c *Coordinator) backoff(t *simclock.Task, attempt int) {
	t.Sleep(time.Duration(attempt+1) * 5 * time.Millisecond)
}

// Write writes raw key (a put, or a delete when tombstone), stamping the
// view's version unless unversioned. It returns the commit timestamp, or
// an error that errs.Ambiguous classifies.
func (c *Coordinator) Write(t *simclock.Task, req WriteReq, unversioned bool) (hlc.TS, error) {
	var err error
	for attempt := 0; attempt < c.attempts; attempt++ {
		r, ok := c.view.Lookup(keys.RouteKey(req.Key))
		if !ok {
			c.refresh(t)
			continue
		}
		if r.State == catalog.WriteFenced {
			err = errs.ErrWriteFenced
			c.backoff(t, attempt)
			c.refresh(t)
			continue
		}
		req.HasVersion, req.Observed = !unversioned, 0
		if !unversioned {
			req.Observed = c.view.Version
		}
		var resp any
		resp, err = c.env.Net.Call(t, r.Group, req)
		if err == nil {
			return resp.(WriteResp).TS, nil
		}
		if !errs.Retryable(err) {
			return 0, err
		}
		c.backoff(t, attempt)
		if errs.Routing(err) {
			c.refresh(t)
		}
	}
	return 0, err
}

// Read reads raw key at ts (0: latest). Reads change nothing, so every
// failure is retried.
func (c *Coordinator) Read(t *simclock.Task, key string, ts hlc.TS) (ReadResp, error) {
	var err error
	for attempt := 0; attempt < c.attempts; attempt++ {
		r, ok := c.view.Lookup(keys.RouteKey(key))
		if !ok {
			c.refresh(t)
			continue
		}
		var resp any
		resp, err = c.env.Net.Call(t, r.Group, ReadReq{Key: key, TS: ts})
		if err == nil {
			return resp.(ReadResp), nil
		}
		c.backoff(t, attempt)
		if errs.Routing(err) {
			c.refresh(t)
		}
	}
	return ReadResp{}, err
}

// Scan scans family fam over route keys in span at ts, clipped to the
// route holding span.Start; it returns the span actually scanned.
func (c *Coordinator) Scan(t *simclock.Task, fam keys.Family, span keys.Span, ts hlc.TS, limit int) (ScanResp, keys.Span, error) {
	var err error
	for attempt := 0; attempt < c.attempts; attempt++ {
		r, ok := c.view.Lookup(span.Start)
		if !ok {
			c.refresh(t)
			continue
		}
		s := span
		if r.End != "" && (s.End == "" || s.End > r.End) {
			s.End = r.End
		}
		var resp any
		resp, err = c.env.Net.Call(t, r.Group, ScanReq{Family: fam, Span: s, TS: ts, Limit: limit})
		if err == nil {
			return resp.(ScanResp), s, nil
		}
		c.backoff(t, attempt)
		if errs.Routing(err) {
			c.refresh(t)
		}
	}
	return ScanResp{}, span, err
}
