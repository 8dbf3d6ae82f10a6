package scenarios

import (
	"errors"
	"strconv"
	"time"

	"shardsim/checker/migratecheck"
	"shardsim/model/migrate"
	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/fsm"
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
	txn         float64  // chance a write is a transaction
	onePhase    float64  // chance a transaction commits in one phase
	callerTS    float64  // chance a write or transaction supplies its own commit timestamp
	rangeDelete float64  // chance a write is a range delete
	txnStall    float64  // chance a client stalls between prepare and commit
	abort       float64  // chance a client rolls its transaction back
	readShare   int      // percent of operations that read
	pace        time.Duration
	restUntil   time.Duration // after its first operation a client waits until this instant (0: not at all)
	// families are the internal families the clients read and write rows
	// of (nil: clientFamilies()).
	families []keys.Family
}

// rowFamilies returns the internal families the clients use.
func (wl *migrateWorkload) rowFamilies() []keys.Family {
	if wl.families != nil {
		return wl.families
	}
	return clientFamilies()
}

// migrateClient runs one client's operations through its own coordinator and
// records every outcome for the checkers.
type migrateClient struct {
	idx   int
	ops   int
	wl    *migrateWorkload
	coord *migrate.Coordinator
	rec   *migrateRecorder
	trace *OpTrace          // op.invoke and op.return records of every operation
	seen  []hlc.TS          // commit and read timestamps this client learned
	last  map[string]hlc.TS // per raw key, the last timestamp this client read or wrote it at
	seq   int
	done  bool
}

// Receive implements simclock.Actor.
func (c *migrateClient) Receive(ctx *simclock.Context, msg any) {
	if _, ok := msg.(simclock.Started); !ok {
		return
	}
	c.coord.Start(ctx)
	// Room for what a client learns in a run: about one timestamp an
	// operation, over a few dozen raw keys (grown from empty, the map
	// rehashed and seen reallocated at every doubling).
	c.last = make(map[string]hlc.TS, clientKeysHint)
	c.seen = make([]hlc.TS, 0, c.ops)
	ctx.Go("workload", func(t *simclock.Task) {
		ch := t.Choices()
		for i := 0; i < c.ops; i++ {
			if i == 1 && simclock.Time(c.wl.restUntil) > t.Now() {
				t.Sleep(simclock.Time(c.wl.restUntil).Sub(t.Now()))
			}
			c.one(t, ch)
			t.Sleep(ch.Duration(0, c.wl.pace))
		}
		c.done = true
		ctx.Rec("client.done").Int("ops", int64(c.ops)).End()
	})
}

// clientKeysHint is the room a client's map of the keys it learned starts
// with (see Receive): 32 and 48 measured the same on migrate 1-30.
const clientKeysHint = 32

// userKey draws a user key (hot ones more often).
func (c *migrateClient) userKey(ch *simclock.Choices) string {
	uk := simclock.Pick(ch, c.wl.userKeys)
	if len(c.wl.hot) > 0 && ch.Chance(c.wl.hotShare) {
		uk = simclock.Pick(ch, c.wl.hot)
	}
	return uk
}

// rawKey draws a raw key: a user key, or an internal-family row of one.
func (c *migrateClient) rawKey(ch *simclock.Choices) string {
	uk := c.userKey(ch)
	if !ch.Chance(c.wl.internal) {
		return uk
	}
	f := simclock.Pick(ch, c.wl.rowFamilies())
	return keys.Encode(f, uk, strconv.Itoa(ch.Intn(2)))
}

func (c *migrateClient) opID() string {
	c.seq++
	// "c<idx>-<seq>", built without fmt (one per operation).
	var buf [24]byte
	b := append(buf[:0], 'c')
	b = strconv.AppendInt(b, int64(c.idx), 10)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(c.seq), 10)
	return string(b)
}

// strTS adds a timestamp as a string field: the token Str(name,
// ts.String()) adds, its text written from a stack buffer (clients trace a
// timestamp or more with every operation; the string cost two allocations).
func strTS(d *simclock.Detail, name string, ts hlc.TS) *simclock.Detail {
	var b [hlc.MaxStringLen]byte
	return d.StrBytes(name, ts.AppendTo(b[:0]))
}

// strSpan adds a span as a string field, as strTS adds a timestamp.
func strSpan(d *simclock.Detail, name string, s keys.Span) *simclock.Detail {
	var b [64]byte
	return d.StrBytes(name, s.AppendTo(b[:0]))
}

func (c *migrateClient) learn(key string, ts hlc.TS) {
	c.seen = append(c.seen, ts)
	if ts > c.last[key] {
		c.last[key] = ts
	}
}

func (c *migrateClient) one(t *simclock.Task, ch *simclock.Choices) {
	roll := ch.Intn(100)
	switch {
	case roll < c.wl.readShare*6/10:
		c.pointRead(t, ch)
	case roll < c.wl.readShare:
		c.scan(t, ch)
	case ch.Chance(c.wl.txn):
		c.transaction(t, ch)
	case ch.Chance(c.wl.rangeDelete):
		c.deleteRange(t, ch)
	default:
		c.write(t, ch)
	}
}

func (c *migrateClient) write(t *simclock.Task, ch *simclock.Choices) {
	key := c.rawKey(ch)
	op := c.opID()
	del := ch.Chance(0.15)
	req := migrate.WriteReq{Key: key, Value: op, Tombstone: del, Op: op}
	if !del && ch.Chance(c.wl.ttl) {
		req.TTLms = uint64(ch.Between(50, 1500))
	}
	if ch.Chance(c.wl.callerTS) && c.last[key] != 0 {
		req.TS = c.last[key] + 1 // just above what this client last saw of the key
	}
	call := t.Now()
	unversioned := ch.Chance(c.wl.unversioned)
	traced, d := c.trace.Invoke(t.Context(), "write")
	d.Bytes("key", []byte(key)).Str("value", op).FlagIf("delete", del).FlagIf("unversioned", unversioned)
	if req.TTLms > 0 {
		d.Uint("ttl_ms", req.TTLms)
	}
	if req.TS != 0 {
		strTS(d, "caller_ts", req.TS)
	}
	d.End()
	ts, err := c.coord.Write(t, req, unversioned)
	strTS(traced.Complete(err), "ts", ts).End()
	c.rec.write(c.idx, key, op, del, call, t.Now(), ts, err)
	if err == nil {
		c.learn(key, ts)
	}
}

func (c *migrateClient) deleteRange(t *simclock.Task, ch *simclock.Choices) {
	i := ch.Intn(len(c.wl.userKeys))
	j := i + 1 + ch.Intn(3)
	span := keys.Span{Start: c.wl.userKeys[i]}
	if j < len(c.wl.userKeys) {
		span.End = c.wl.userKeys[j]
	}
	op := c.opID()
	call := t.Now()
	traced, d := c.trace.Invoke(t.Context(), "delete-range")
	strSpan(d, "span", span).Str("op", op).End()
	ts, _, err := c.coord.DeleteRange(t, span, op)
	strTS(traced.Complete(err), "ts", ts).End()
	c.rec.rangeDelete(c.idx, op, call, t.Now(), ts, err)
}

func (c *migrateClient) pointRead(t *simclock.Task, ch *simclock.Choices) {
	key := c.rawKey(ch)
	var at hlc.TS
	if len(c.seen) > 0 && ch.Chance(0.35) {
		at = simclock.Pick(ch, c.seen)
	}
	op := c.opID()
	call := t.Now()
	traced, d := c.trace.Invoke(t.Context(), "read")
	d.Bytes("key", []byte(key))
	if at != 0 {
		strTS(d, "at", at)
	}
	d.End()
	r, err := c.coord.Read(t, key, at)
	d = traced.Complete(err)
	if err == nil {
		strTS(d, "ts", r.TS).FlagIf("found", r.Read.Found)
		if r.Read.Found {
			strTS(d.Bytes("value", []byte(r.Read.Version.Value)), "version", r.Read.Version.TS)
		}
	}
	d.End()
	if err == nil {
		c.rec.read(c.idx, op, key, at == 0, call, t.Now(), r)
		c.learn(key, r.TS)
	}
}

func (c *migrateClient) scan(t *simclock.Task, ch *simclock.Choices) {
	fam := keys.FamilyUser
	if ch.Chance(c.wl.internal) {
		fam = simclock.Pick(ch, c.wl.rowFamilies())
	}
	i := ch.Intn(len(c.wl.userKeys))
	j := i + 1 + ch.Intn(6)
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
	call := t.Now()
	traced, d := c.trace.Invoke(t.Context(), "scan")
	strSpan(d.Str("family", fam.String()), "span", span).Int("limit", int64(limit))
	if at != 0 {
		strTS(d, "at", at)
	}
	d.End()
	r, scanned, err := c.coord.Scan(t, fam, span, at, limit)
	d = traced.Complete(err)
	if err == nil {
		strTS(d, "ts", r.TS).Uint("rows", uint64(len(r.Rows)))
		for _, row := range r.Rows {
			d.Open("row").Bytes("key", []byte(row.Key)).Bytes("value", []byte(row.Value))
			strTS(d, "version", row.TS).Close()
		}
	}
	d.End()
	if err == nil {
		c.rec.scan(c.idx, op, fam, scanned, at == 0, limit, call, t.Now(), r)
		c.seen = append(c.seen, r.TS)
	}
}

// transaction runs one read-modify-write transaction over one to three
// user keys the coordinator's view puts on one group: read them, then
// prepare and commit (or commit in one phase), sometimes stalling between
// the two or rolling back.
func (c *migrateClient) transaction(t *simclock.Task, ch *simclock.Choices) {
	tx := fsm.Txn{ID: c.opID()}
	primary := c.userKey(ch)
	g, ok := c.coord.Group(primary)
	if !ok {
		return
	}
	tx.Primary, tx.Keys = primary, append(make([]string, 0, 3), primary) // with up to two more
	for i, n := 0, ch.Intn(3); i < n; i++ {
		k := simclock.Pick(ch, c.wl.userKeys)
		if kg, ok := c.coord.Group(k); ok && kg == g && !hasKey(tx.Keys, k) {
			tx.Keys = append(tx.Keys, k)
		}
	}
	obs := migratecheck.TxnObs{ID: tx.ID, Call: t.Now(), Keys: tx.Keys}
	traced, d := c.trace.Invoke(t.Context(), "txn")
	d.Str("txn", tx.ID)
	for _, k := range tx.Keys {
		d.Bytes("key", []byte(k))
	}
	d.End()
	var maxRead hlc.TS
	obs.Reads = make([]migratecheck.TxnRead, 0, len(tx.Keys))
	for _, k := range tx.Keys {
		r, err := c.coord.Read(t, k, 0)
		if err != nil {
			traced.Complete(err).Str("outcome", "not begun").End()
			return // nothing prepared yet: the transaction never began
		}
		c.rec.read(c.idx, c.opID(), k, true, obs.Call, t.Now(), r)
		obs.Reads = append(obs.Reads, migratecheck.TxnRead{Key: k, Chosen: r.Read.Chosen, TS: r.Read.Version.TS})
		if obs.ReadTS == 0 || r.TS < obs.ReadTS {
			obs.ReadTS = r.TS
		}
		maxRead = max(maxRead, r.TS)
	}
	tx.ReadTS = obs.ReadTS
	tx.Values, tx.Deletes = make([]string, 0, len(tx.Keys)), make([]bool, 0, len(tx.Keys))
	for range tx.Keys {
		tx.Values = append(tx.Values, tx.ID)
		tx.Deletes = append(tx.Deletes, ch.Chance(0.1))
	}
	if ch.Chance(c.wl.callerTS) {
		tx.CommitTS = maxRead + 1
	}
	if ch.Chance(c.wl.onePhase) {
		c.onePhase(t, traced, tx, obs)
		return
	}
	c.twoPhase(t, ch, traced, tx, obs)
}

func hasKey(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func (c *migrateClient) onePhase(t *simclock.Task, traced ClientOp, tx fsm.Txn, obs migratecheck.TxnObs) {
	r, err := c.coord.Commit(t, tx, true)
	switch {
	case err == nil:
		obs.Outcome = migratecheck.TxnCommitted
		c.learnTxn(tx, r.TS)
	case errs.Ambiguous(err):
		obs.Outcome = migratecheck.TxnUnknown
	default:
		obs.Outcome = migratecheck.TxnAborted
	}
	obs.Return = t.Now()
	c.endTxn(traced, obs, tx, r.TS)
}

func (c *migrateClient) twoPhase(t *simclock.Task, ch *simclock.Choices, traced ClientOp, tx fsm.Txn, obs migratecheck.TxnObs) {
	p, err := c.coord.Prepare(t, tx)
	if err != nil {
		if errs.Ambiguous(err) {
			_ = c.coord.Rollback(t, tx) // resolve: it may have prepared
		}
		obs.Outcome, obs.Return = migratecheck.TxnAborted, t.Now()
		c.endTxn(traced, obs, tx, 0)
		return
	}
	tx.StartTS, tx.CommitTS = p.StartTS, p.CommitTS
	if ch.Chance(c.wl.txnStall) {
		t.Sleep(ch.Duration(0, 600*time.Millisecond))
	}
	if ch.Chance(c.wl.abort) {
		_ = c.coord.Rollback(t, tx) // no COMMIT was sent: it never commits, whatever the answer
		obs.Outcome = migratecheck.TxnAborted
		obs.Return = t.Now()
		c.endTxn(traced, obs, tx, 0)
		return
	}
	var r migrate.CommitResp
	ambiguous := false // an earlier attempt may have committed
	for attempt := 0; attempt < 4; attempt++ {
		r, err = c.coord.Commit(t, tx, false)
		if err == nil || !errs.Ambiguous(err) {
			break
		}
		ambiguous = true
	}
	switch {
	case err == nil:
		obs.Outcome = migratecheck.TxnCommitted
		c.learnTxn(tx, r.TS)
	case errors.Is(err, errs.ErrTxnAborted) || errors.Is(err, errs.ErrTxnNotFound) || !ambiguous && !errs.Ambiguous(err):
		obs.Outcome = migratecheck.TxnAborted
	default:
		obs.Outcome = migratecheck.TxnUnknown
	}
	obs.Return = t.Now()
	c.endTxn(traced, obs, tx, r.TS)
}

// endTxn records a transaction's outcome as the client learned it.
func (c *migrateClient) endTxn(traced ClientOp, obs migratecheck.TxnObs, tx fsm.Txn, ts hlc.TS) {
	outcome := "unknown"
	switch obs.Outcome {
	case migratecheck.TxnCommitted:
		outcome = "committed"
	case migratecheck.TxnAborted:
		outcome = "aborted"
	}
	d := traced.Complete(nil).Str("outcome", outcome)
	if obs.Outcome == migratecheck.TxnCommitted {
		strTS(d, "ts", ts)
	}
	d.End()
	c.rec.txn(c.idx, obs, tx, ts)
}

func (c *migrateClient) learnTxn(tx fsm.Txn, ts hlc.TS) {
	for _, k := range tx.Keys {
		c.learn(k, ts)
	}
}
