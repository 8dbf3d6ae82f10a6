package scenarios

import (
	"fmt"
	"time"

	"shardsim/checker/migratecheck"
	"shardsim/model/migrate"
	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/simclock"
)

// migrateWorkload is what clients of a migration scenario draw their operations
// from.
type migrateWorkload struct {
	userKeys    []string // route keys the clients use
	hot         []string // keys drawn more often (hotspot)
	hotShare    float64  // chance an operation picks a hot key
	internal    float64  // chance an operation picks an internal-family row
	unversioned float64  // chance a write carries no catalog version
	ttl         float64  // chance a put has a TTL
	pace        time.Duration
}

// migrateClient runs one client's operations through its own coordinator and
// records every outcome for the checkers.
type migrateClient struct {
	idx   int
	ops   int
	wl    *migrateWorkload
	coord *migrate.Coordinator
	rec   *migrateRecorder
	trace *OpTrace // op.invoke and op.return records of every operation
	seen  []hlc.TS // commit and read timestamps this client learned
	seq   int
	done  bool
}

// Receive implements simclock.Actor.
func (c *migrateClient) Receive(ctx *simclock.Context, msg any) {
	if _, ok := msg.(simclock.Started); !ok {
		return
	}
	c.coord.Start(ctx)
	ctx.Go("workload", func(t *simclock.Task) {
		ch := t.Choices()
		for i := 0; i < c.ops; i++ {
			c.one(t, ch)
			t.Sleep(ch.Duration(0, c.wl.pace))
		}
		c.done = true
		ctx.Rec("client.done").Int("ops", int64(c.ops)).End()
	})
}

// rawKey draws a raw key: a user key, or an internal-family row of one.
func (c *migrateClient) rawKey(ch *simclock.Choices) string {
	uk := simclock.Pick(ch, c.wl.userKeys)
	if len(c.wl.hot) > 0 && ch.Chance(c.wl.hotShare) {
		uk = simclock.Pick(ch, c.wl.hot)
	}
	if !ch.Chance(c.wl.internal) {
		return uk
	}
	fams := keys.Families()[1:]
	f := simclock.Pick(ch, fams)
	return keys.Encode(f, uk, fmt.Sprint(ch.Intn(2)))
}

func (c *migrateClient) opID() string {
	c.seq++
	return fmt.Sprintf("c%d-%d", c.idx, c.seq)
}

func (c *migrateClient) one(t *simclock.Task, ch *simclock.Choices) {
	now := func() simclock.Time { return t.Now() }
	switch roll := ch.Intn(100); {
	case roll < 45: // put or delete
		key := c.rawKey(ch)
		op := c.opID()
		del := roll >= 38
		req := migrate.WriteReq{Key: key, Value: op, Tombstone: del, Op: op}
		if !del && ch.Chance(c.wl.ttl) {
			req.TTLms = uint64(ch.Between(50, 1500))
		}
		call := now()
		unversioned := ch.Chance(c.wl.unversioned)
		traced, d := c.trace.Invoke(t.Context(), "write")
		d.Bytes("key", []byte(key)).Str("value", op).FlagIf("delete", del).FlagIf("unversioned", unversioned)
		if req.TTLms > 0 {
			d.Uint("ttl_ms", req.TTLms)
		}
		d.End()
		ts, err := c.coord.Write(t, req, unversioned)
		traced.Complete(err).Str("ts", ts.String()).End()
		c.rec.write(c.idx, key, op, del, call, now(), ts, err)
		if err == nil {
			c.seen = append(c.seen, ts)
		}
	case roll < 75: // point read, latest or at an older timestamp
		key := c.rawKey(ch)
		var at hlc.TS
		if len(c.seen) > 0 && ch.Chance(0.35) {
			at = simclock.Pick(ch, c.seen)
		}
		op := c.opID()
		call := now()
		traced, d := c.trace.Invoke(t.Context(), "read")
		d.Bytes("key", []byte(key))
		if at != 0 {
			d.Str("at", at.String())
		}
		d.End()
		r, err := c.coord.Read(t, key, at)
		d = traced.Complete(err)
		if err == nil {
			d.Str("ts", r.TS.String()).FlagIf("found", r.Read.Found)
			if r.Read.Found {
				d.Bytes("value", []byte(r.Read.Version.Value)).Str("version", r.Read.Version.TS.String())
			}
		}
		d.End()
		if err == nil {
			c.rec.read(c.idx, op, key, at == 0, call, now(), r)
			c.seen = append(c.seen, r.TS)
		}
	default: // scan of one family over a few route keys
		fam := keys.FamilyUser
		if ch.Chance(c.wl.internal) {
			fam = simclock.Pick(ch, keys.Families()[1:])
		}
		i := ch.Intn(len(c.wl.userKeys))
		j := i + 1 + ch.Intn(4)
		span := keys.Span{Start: c.wl.userKeys[i]}
		if j < len(c.wl.userKeys) {
			span.End = c.wl.userKeys[j]
		}
		var at hlc.TS
		if len(c.seen) > 0 && ch.Chance(0.3) {
			at = simclock.Pick(ch, c.seen)
		}
		limit := 0
		if ch.Chance(0.2) {
			limit = 1 + ch.Intn(3)
		}
		op := c.opID()
		call := now()
		traced, d := c.trace.Invoke(t.Context(), "scan")
		d.Str("family", fam.String()).Str("span", span.String()).Int("limit", int64(limit))
		if at != 0 {
			d.Str("at", at.String())
		}
		d.End()
		r, scanned, err := c.coord.Scan(t, fam, span, at, limit)
		d = traced.Complete(err)
		if err == nil {
			d.Str("ts", r.TS.String()).Uint("rows", uint64(len(r.Rows)))
			for _, row := range r.Rows {
				d.Open("row").Bytes("key", []byte(row.Key)).Bytes("value", []byte(row.Value)).Str("version", row.TS.String()).Close()
			}
		}
		d.End()
		if err == nil {
			c.rec.scan(c.idx, op, fam, scanned, at == 0, limit, call, now(), r)
			c.seen = append(c.seen, r.TS)
		}
	}
}

// migrateRecorder keeps what the clients saw.
type migrateRecorder struct {
	ops    []migratecheck.KeyOp
	acked  []migratecheck.AckedWrite
	reads  []migratecheck.ReadObs
	scans  []migratecheck.ScanObs
	latest []bool // per scan: at the latest timestamp
	spans  []scanTimes
	counts map[string]int64
}

type scanTimes struct {
	client    int
	call, ret simclock.Time
}

func newMigrateRecorder() *migrateRecorder { return &migrateRecorder{counts: map[string]int64{}} }

func (r *migrateRecorder) write(client int, key, op string, del bool, call, ret simclock.Time, ts hlc.TS, err error) {
	o := migratecheck.KeyOp{Client: client, Key: key, Call: call, Return: ret, Write: true, Delete: del, Op: op}
	switch {
	case err == nil:
		r.acked = append(r.acked, migratecheck.AckedWrite{Op: op, Key: key, TS: ts})
		r.counts["writes_acked"]++
	case errs.Ambiguous(err):
		o.Ambiguous = true
		r.counts["writes_ambiguous"]++
	default:
		r.counts["writes_failed"]++
		return // certainly not applied
	}
	r.ops = append(r.ops, o)
}

func (r *migrateRecorder) read(client int, op, key string, latest bool, call, ret simclock.Time, resp migrate.ReadResp) {
	r.reads = append(r.reads, migratecheck.ReadObs{Op: op, Key: key, TS: resp.TS, Found: resp.Read.Found, Version: resp.Read.Version})
	r.counts["reads"]++
	if latest {
		r.ops = append(r.ops, migratecheck.KeyOp{Client: client, Key: key, Call: call, Return: ret,
			ReadTS: resp.TS, Found: resp.Read.Found, Value: resp.Read.Version.Value})
	}
}

func (r *migrateRecorder) scan(client int, op string, fam keys.Family, span keys.Span, latest bool, limit int, call, ret simclock.Time, resp migrate.ScanResp) {
	r.scans = append(r.scans, migratecheck.ScanObs{Op: op, Family: fam, Span: span, TS: resp.TS, Limit: limit, Rows: resp.Rows})
	r.latest = append(r.latest, latest)
	r.spans = append(r.spans, scanTimes{client, call, ret})
	r.counts["scans"]++
}

// history returns the per-key operations, with each latest scan turned into
// one read per key it covered (among keys the oracle knows).
func (r *migrateRecorder) history(oracle *migratecheck.VersionOracle) []migratecheck.KeyOp {
	out := append([]migratecheck.KeyOp(nil), r.ops...)
	for i, s := range r.scans {
		if r.latest[i] {
			out = append(out, oracle.ScanReads(s, r.spans[i].client, r.spans[i].call, r.spans[i].ret)...)
		}
	}
	return out
}
