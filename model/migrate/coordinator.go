package migrate

import (
	"errors"
	"time"

	"shardsim/model/bugs"
	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/job"
	"shardsim/model/migrate/keys"
	"shardsim/simclock"
	"shardsim/simkv"
)

// Coordinator routes a client's requests by its own catalog view, which a
// watcher on the metadata store moves forward (never back) after a lag,
// and stamps the view's version on the requests it sends (reads too: the
// read fence judges them by it). It rejects writes to WriteFenced routes
// itself (the group checks again), sends a scan or a range delete to one
// group over as many consecutive routes as that group holds in its view,
// and retries requests that certainly did not apply, refreshing its view
// when the group says the route moved.
type Coordinator struct {
	env      *Env
	name     string
	view     catalog.Catalog
	client   *simkv.Client
	kv       simkv.KV // client's view for kvTask (kvIn)
	kvTask   *simclock.Task
	choices  *simclock.Choices
	maxLag   time.Duration
	attempts int
	lastRev  int64
	// OnView, if set, is told every version the view moves to.
	OnView func(name string, version uint64)
	// Passive coordinators learn the catalog from their watcher only: a
	// routing error is retried on the same view (some deployments route
	// from a watched table and never read the catalog on the request path).
	Passive bool
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
	c.kv, c.kvTask = nil, nil
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
				cat, err := c.env.catalogs.decode(e.Kv.Value)
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
	if c.Passive {
		return
	}
	// A catalog no newer than the view adopt would ignore: no need to
	// decode its routes.
	if cat, _, ok, err := loadCatalogFrom(c.kvIn(t), c.view.Version+1, &c.env.catalogs); err == nil && ok {
		c.adopt(cat)
	}
}

// kvIn returns the metadata client's view for task t, made once for the
// task it was last asked for: a client runs its requests in one task, and
// a refresh on every retry of a fenced write made it anew each time.
func (c *Coordinator) kvIn(t *simclock.Task) simkv.KV {
	if c.kvTask != t {
		c.kv, c.kvTask = c.client.In(t), t
	}
	return c.kv
}

func (c *Coordinator) backoff(t *simclock.Task, attempt int) {
	t.Sleep(time.Duration(attempt+1) * 5 * time.Millisecond)
}

// versioned reports whether requests carry the view's version (the
// no-read-fence variant's coordinators stamp none on reads).
func (c *Coordinator) stamp(read bool) (bool, uint64) {
	if read && c.env.Bugs.Has(bugs.MigrateNoReadFence) {
		return false, 0
	}
	return true, c.view.Version
}

// target is what a request addresses: a span of route keys or, for a
// point request, one route key. A point's span is its Start only: its end,
// keys.KeyAfter, would be built for every request and is never needed (a
// route overlaps [k, KeyAfter(k)) exactly when it holds k: route
// boundaries hold no NUL byte).
type target struct {
	span  keys.Span
	point bool
}

// spanTarget addresses span.
func spanTarget(span keys.Span) target { return target{span: span} }

// pointTarget addresses the route key of raw key raw.
func pointTarget(raw string) target {
	return target{span: keys.Span{Start: keys.RouteKey(raw)}, point: true}
}

// overlaps reports whether route x holds a key tg addresses.
func (tg target) overlaps(x *catalog.Route) bool {
	if tg.point {
		return x.Span().Contains(tg.span.Start)
	}
	return x.Span().Overlaps(tg.span)
}

// route finds the group for tg by the view: the group of the route
// holding its start, over the consecutive routes that group holds; it
// returns that group and the part of tg's span those routes cover (a
// point's is of no use). With fenced, a write-fenced route among them
// refuses the request.
func (c *Coordinator) route(tg target, fenced bool) (int, keys.Span, error) {
	i, ok := c.view.LookupIndex(tg.span.Start)
	if !ok {
		return 0, tg.span, errs.ErrWrongGroup
	}
	// The routes are read in place: a request is routed on every attempt,
	// and copying each route (a dozen words) cost more than testing it.
	routes := c.view.Routes
	g, part := routes[i].Group, tg.span
	for j := range routes {
		x := &routes[j]
		if !tg.overlaps(x) {
			continue
		}
		if x.Group != g {
			part.End = x.Start
			break
		}
		if fenced && x.State == catalog.WriteFenced {
			return 0, tg.span, errs.ErrWriteFenced
		}
	}
	return g, part, nil
}

// do runs one request against the group route picks for tg, retrying
// what certainly did not apply; build makes the request for the chosen
// group and part. It returns the answer and the part.
func (c *Coordinator) do(t *simclock.Task, tg target, fenced, read bool, build func(part keys.Span, has bool, v uint64) any) (any, keys.Span, error) {
	var err error
	for attempt := 0; attempt < c.attempts; attempt++ {
		g, part, rerr := c.route(tg, fenced)
		if rerr != nil {
			err = rerr
			c.backoff(t, attempt)
			c.refresh(t)
			continue
		}
		has, v := c.stamp(read)
		var resp any
		resp, err = c.env.Net.Call(t, g, build(part, has, v))
		if err == nil {
			return resp, part, nil
		}
		if !errs.Retryable(err) && !read {
			return nil, part, err
		}
		if read && !errs.Retryable(err) && !errs.Ambiguous(err) {
			return nil, part, err
		}
		c.backoff(t, attempt)
		if errs.Routing(err) {
			c.refresh(t)
		}
	}
	return nil, tg.span, err
}

// Write writes raw key (a put, or a delete when tombstone), stamping the
// view's version unless unversioned; req.TS, when set, is the caller's
// commit timestamp. It returns the commit timestamp, or an error that
// errs.Ambiguous classifies.
func (c *Coordinator) Write(t *simclock.Task, req WriteReq, unversioned bool) (hlc.TS, error) {
	resp, _, err := c.do(t, pointTarget(req.Key), true, false, func(_ keys.Span, has bool, v uint64) any {
		req.HasVersion, req.Observed = has && !unversioned, 0
		if req.HasVersion {
			req.Observed = v
		}
		return req
	})
	if err != nil {
		return 0, err
	}
	return resp.(WriteResp).TS, nil
}

// DeleteRange deletes every user key of span held by the group of its
// first route (over that group's consecutive routes). It returns the
// commit timestamp and the part of span deleted.
func (c *Coordinator) DeleteRange(t *simclock.Task, span keys.Span, op string) (hlc.TS, keys.Span, error) {
	resp, part, err := c.do(t, spanTarget(span), true, false, func(part keys.Span, has bool, v uint64) any {
		return DeleteRangeReq{Span: part, HasVersion: has, Observed: v, Op: op}
	})
	if err != nil {
		return 0, part, err
	}
	return resp.(WriteResp).TS, part, nil
}

// Read reads raw key at ts (0: latest). Reads change nothing, so every
// failure but a definite refusal is retried.
func (c *Coordinator) Read(t *simclock.Task, key string, ts hlc.TS) (ReadResp, error) {
	resp, _, err := c.do(t, pointTarget(key), false, true, func(_ keys.Span, has bool, v uint64) any {
		return ReadReq{Key: key, TS: ts, HasVersion: has, Observed: v}
	})
	if err != nil {
		return ReadResp{}, err
	}
	return *resp.(*ReadResp), nil
}

// Scan scans family fam over route keys in span at ts, as far as the group
// of span.Start holds consecutive routes in the view; it returns the span
// actually scanned.
func (c *Coordinator) Scan(t *simclock.Task, fam keys.Family, span keys.Span, ts hlc.TS, limit int) (ScanResp, keys.Span, error) {
	resp, part, err := c.do(t, spanTarget(span), false, true, func(part keys.Span, has bool, v uint64) any {
		return ScanReq{Family: fam, Span: part, TS: ts, Limit: limit, HasVersion: has, Observed: v}
	})
	if err != nil {
		return ScanResp{}, span, err
	}
	return *resp.(*ScanResp), part, nil
}

// ScanRaw is Scan narrowed to raw keys in raw (ScanReq.Raw): a prefix scan
// of one user key's rows.
func (c *Coordinator) ScanRaw(t *simclock.Task, fam keys.Family, span, raw keys.Span, ts hlc.TS, limit int) (ScanResp, error) {
	resp, _, err := c.do(t, spanTarget(span), false, true, func(part keys.Span, has bool, v uint64) any {
		return ScanReq{Family: fam, Span: part, TS: ts, Limit: limit, HasVersion: has, Observed: v, Raw: raw}
	})
	if err != nil {
		return ScanResp{}, err
	}
	return *resp.(*ScanResp), nil
}

// Prepare prepares tx (its keys must share a group in the view): it
// returns the start and commit timestamps.
func (c *Coordinator) Prepare(t *simclock.Task, tx fsm.Txn) (PrepareResp, error) {
	resp, _, err := c.do(t, pointTarget(tx.Primary), true, false, func(_ keys.Span, has bool, v uint64) any {
		return PrepareReq{Txn: tx, HasVersion: has, Observed: v}
	})
	if err != nil {
		return PrepareResp{}, err
	}
	return resp.(PrepareResp), nil
}

// Commit commits tx (prepared, or in one phase). A prepared transaction's
// commit is sent even to a write-fenced route: the group decides by its
// proof.
func (c *Coordinator) Commit(t *simclock.Task, tx fsm.Txn, onePhase bool) (CommitResp, error) {
	resp, _, err := c.do(t, pointTarget(tx.Primary), onePhase, false, func(_ keys.Span, has bool, v uint64) any {
		return CommitReq{Txn: tx, OnePhase: onePhase, HasVersion: has, Observed: v}
	})
	if err != nil {
		return CommitResp{}, err
	}
	return resp.(CommitResp), nil
}

// Rollback rolls tx back.
func (c *Coordinator) Rollback(t *simclock.Task, tx fsm.Txn) error {
	_, _, err := c.do(t, pointTarget(tx.Primary), false, false, func(keys.Span, bool, uint64) any { return RollbackReq{Txn: tx} })
	return err
}

// Group returns the group that holds route key rk in the view.
func (c *Coordinator) Group(rk string) (int, bool) {
	r, ok := c.view.Lookup(rk)
	return r.Group, ok
}

// ErrDefinite reports whether err says certainly not applied, for a caller
// that gave up retrying.
func ErrDefinite(err error) bool {
	return err != nil && !errs.Ambiguous(err) && !errors.Is(err, errs.ErrTimeout)
}
