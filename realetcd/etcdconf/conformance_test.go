package etcdconf

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"shardsim/realetcd/etcdtest"
	"shardsim/simkv"
)

// envInt reads a positive integer from the environment, or def.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// runner keeps one simkv store in lockstep with one real etcd: every
// request goes to both and the answers must be equal field by field.
type runner struct {
	t    *testing.T
	c    *client
	m    *simkv.Store
	seed uint64
	seq  int
	op   int // request number within the sequence

	modelW       map[int64][]simkv.WatchResponse
	live         []int64         // watches of this sequence not yet canceled
	pastStarts   map[int64]int64 // live watches that started in the past: their start
	invalid      int             // watch creations refused for an empty range
	lastPhysical bool
	start        time.Time

	requests, skipped, events, watches int
	outcomes                           map[string]int
	// version is the server's etcd version ("3.4.23", "3.6.16");
	// differences counts the answers that differ in a documented way
	// between that version and the 3.4 simkv models (versionDifference).
	version     string
	differences map[string]int
}

// versionDifference names the documented way an answer of a newer etcd
// differs from etcd 3.4's, which simkv models, or returns "". One class is
// known, from running the suite against etcd 3.6.16:
//
//   - txn-check-order: a transaction that fails validation for two reasons,
//     a range at a compacted or future revision and a put naming a lease
//     that does not exist (or an ignore_value/ignore_lease put of a missing
//     key), is refused for the put by etcd 3.4 and for the range by 3.6
//     (3.6 checks the ranges first). Either way nothing is applied, so
//     the two sides stay equal and the run goes on.
func (r *runner) versionDifference(mErr error, rErr *wireErr) string {
	if strings.HasPrefix(r.version, "3.4") || mErr == nil || rErr == nil {
		return ""
	}
	putErr := errors.Is(mErr, simkv.ErrLeaseNotFound) || errors.Is(mErr, simkv.ErrKeyNotFound)
	revErr := rErr.Msg == simkv.ErrCompacted.Error() || rErr.Msg == simkv.ErrFutureRev.Error()
	if putErr && revErr {
		return "txn-check-order"
	}
	return ""
}

// count tallies what kinds of answers the run compared, to show coverage.
func (r *runner) count(req simkv.Request, resp simkv.Response, err error) {
	kind := strings.SplitN(req.String(), "(", 2)[0]
	switch {
	case err != nil:
		kind += ": " + err.Error()
	case resp.Txn != nil:
		kind += txnShape(resp.Txn)
	}
	r.outcomes[kind]++
}

func txnShape(t *simkv.TxnResponse) string {
	s := " else"
	if t.Succeeded {
		s = " then"
	}
	for _, op := range t.Responses {
		if op.Txn != nil {
			return s + " nested"
		}
	}
	return s
}

var equateEmpty = cmpopts.EquateEmpty()

func (r *runner) fail(what, diff string) {
	r.t.Fatalf("DIVERGENCE seed=%d sequence=%d op=%d: %s\n(-simkv +etcd)\n%s\nrerun: SHARDSIM_CONF_SEED=%d go test ./realetcd/etcdconf -run TestConformance",
		r.seed, r.seq, r.op, what, diff, r.seed)
}

// trace logs every step when SHARDSIM_CONF_TRACE=1.
func (r *runner) trace(format string, args ...any) {
	if traceOn {
		r.t.Logf("seq=%d op=%d "+format, append([]any{r.seq, r.op}, args...)...)
	}
}

var traceOn = os.Getenv("SHARDSIM_CONF_TRACE") == "1"

func (r *runner) takeModelWatches() {
	for _, w := range r.m.TakeWatchResponses() {
		r.modelW[w.WatchID] = append(r.modelW[w.WatchID], w)
	}
}

// apply sends req to both sides and compares the answers.
func (r *runner) apply(req simkv.Request) (simkv.Response, error) {
	r.op++
	mResp, mErr := r.m.Apply(0, req)
	r.takeModelWatches()
	if errors.Is(mErr, simkv.ErrTxnWouldCrash) {
		r.skipped++ // would panic etcd 3.4; nothing changed on the model
		return mResp, mErr
	}
	r.requests++
	r.count(req, mResp, mErr)
	rResp, rErr := r.c.do(req)
	r.trace("%s -> %s %v", req, mResp, mErr)
	// The remaining TTL depends on wall-clock time: accept any value the
	// time elapsed since the test began can explain.
	if m, x := mResp.LeaseTimeToLive, rResp.LeaseTimeToLive; m != nil && x != nil && m.TTL >= 0 {
		slack := int64(time.Since(r.start).Seconds()) + 2
		if x.TTL <= m.TTL && x.TTL >= m.TTL-slack {
			x.TTL = m.TTL
		}
	}
	// etcd orders leases by expiry, which wall-clock time decides.
	if m, x := mResp.LeaseLeases, rResp.LeaseLeases; m != nil && x != nil {
		m2 := *m
		m2.Leases = slices.Sorted(slices.Values(m.Leases))
		mResp.LeaseLeases = &m2
		slices.Sort(x.Leases)
	}
	canonTies(req, &mResp)
	canonTies(req, &rResp)
	type answer struct {
		Resp simkv.Response
		Err  *wireErr
	}
	if diff := cmp.Diff(answer{mResp, modelErr(mErr)}, answer{rResp, rErr}, equateEmpty); diff != "" {
		if d := r.versionDifference(mErr, rErr); d != "" && req.Txn != nil {
			r.differences[d]++
			return mResp, mErr
		}
		r.fail(req.String(), diff)
	}
	return mResp, mErr
}

// canonTies puts the kvs of every sorted range answer with more than 12
// kvs in a canonical order among equal sort values (by key). Beyond 12
// elements sort.Sort is not stable and the order of ties depends on the Go
// release: etcd 3.4.23 was built with Go 1.19 and orders them unlike Go 1.26
// does, and etcd promises no order among ties. Up to 12 (insertion sort),
// answers are compared as they are.
func canonTies(req simkv.Request, resp *simkv.Response) {
	switch {
	case req.Range != nil && resp.Range != nil:
		canonRange(req.Range, resp.Range)
	case req.Txn != nil && resp.Txn != nil:
		canonTxn(req.Txn, resp.Txn)
	}
}

func canonTxn(t *simkv.TxnRequest, r *simkv.TxnResponse) {
	ops := t.Failure
	if r.Succeeded {
		ops = t.Success
	}
	for i := range r.Responses {
		if i >= len(ops) {
			return
		}
		canonTies(simkv.Request{Range: ops[i].Range, Txn: ops[i].Txn},
			&simkv.Response{Range: r.Responses[i].Range, Txn: r.Responses[i].Txn})
	}
}

func canonRange(q *simkv.RangeRequest, r *simkv.RangeResponse) {
	if len(r.Kvs) <= 12 || (q.SortOrder == simkv.SortNone && q.SortTarget == simkv.SortByKey) {
		return
	}
	val := func(kv simkv.KeyValue) string {
		switch q.SortTarget {
		case simkv.SortByVersion:
			return fmt.Sprintf("%020d", kv.Version)
		case simkv.SortByCreateRevision:
			return fmt.Sprintf("%020d", kv.CreateRevision)
		case simkv.SortByModRevision:
			return fmt.Sprintf("%020d", kv.ModRevision)
		case simkv.SortByValue:
			return string(kv.Value)
		}
		return string(kv.Key)
	}
	for i := 0; i < len(r.Kvs); {
		j := i + 1
		for j < len(r.Kvs) && val(r.Kvs[j]) == val(r.Kvs[i]) {
			j++
		}
		group := r.Kvs[i:j]
		sort.Slice(group, func(a, b int) bool { return string(group[a].Key) < string(group[b].Key) })
		i = j
	}
}

// split separates a watch's responses into created notices, the stream of
// events (response boundaries differ between etcd's catch-up batches and
// the model's, so only the concatenation is compared), and cancellations.
func split(ws []simkv.WatchResponse) (created []simkv.WatchResponse, events []simkv.Event, canceled []simkv.WatchResponse) {
	for _, w := range ws {
		switch {
		case w.Created:
			created = append(created, w)
		case w.Canceled:
			canceled = append(canceled, w)
		default:
			events = append(events, w.Events...)
		}
	}
	return
}

func (r *runner) watch(w simkv.WatchRequest) {
	r.op++
	id, err := r.m.Watch(w)
	r.takeModelWatches()
	if e := r.c.watch(w); e != nil {
		r.t.Fatal(e)
	}
	r.watches++
	r.trace("watch %+v -> id %d %v", w, id, err)
	if err != nil {
		r.invalid++
		got := r.c.waitFor(-1, 5*time.Second, func(ws []simkv.WatchResponse) bool { return len(ws) >= r.invalid })
		if diff := cmp.Diff(r.modelW[-1], got, equateEmpty); diff != "" {
			r.fail("watch "+strconv.Quote(string(w.Key)), diff)
		}
		return
	}
	got := r.c.waitFor(id, 5*time.Second, func(ws []simkv.WatchResponse) bool { return len(ws) > 0 && ws[0].Created })
	mc, _, _ := split(r.modelW[id])
	rc, _, _ := split(got)
	if diff := cmp.Diff(mc, rc, equateEmpty); diff != "" {
		r.fail("watch created "+strconv.Quote(string(w.Key)), diff)
	}
	r.live = append(r.live, id)
	if w.StartRevision > 0 && w.StartRevision <= r.m.Revision() {
		r.pastStarts[id] = w.StartRevision
	}
}

// syncWatches waits until the real server has sent every event and
// cancellation the model produced for the live watches.
func (r *runner) syncWatches(ids []int64) {
	for _, id := range ids {
		_, me, mc := split(r.modelW[id])
		r.c.waitFor(id, 5*time.Second, func(ws []simkv.WatchResponse) bool {
			_, re, rc := split(ws)
			return len(re) >= len(me) && len(rc) >= len(mc)
		})
	}
}

// clampCompact keeps a compaction below the start of every live watch
// that began in the past: etcd catches such a watcher up from its backend
// up to 100ms later, so compacting past its start in the meantime would
// cancel it there but not in the model, which caught it up at once. The
// clamp depends only on the op stream, so runs stay deterministic.
func (r *runner) clampCompact(req *simkv.CompactRequest) {
	r.syncWatches(r.live)
	for _, start := range r.pastStarts {
		req.Revision = min(req.Revision, start-1)
	}
}

// cancelWatch cancels a watch on both sides, once the real server has
// caught up with it: etcd drops a catch-up still pending at cancel time.
func (r *runner) cancelWatch(id int64) {
	r.syncWatches([]int64{id})
	r.op++
	r.m.CancelWatch(id)
	r.takeModelWatches()
	r.trace("cancel watch %d", id)
	if err := r.c.cancelWatch(id); err != nil {
		r.t.Fatal(err)
	}
	// Wait for the answer: its header is the revision when etcd handles it.
	r.syncWatches([]int64{id})
	r.live = slices.DeleteFunc(r.live, func(x int64) bool { return x == id })
	delete(r.pastStarts, id)
}

// endSequence cancels the sequence's watches, compares their streams, and
// revokes its leases.
func (r *runner) endSequence(g *gen, all []int64) {
	for _, id := range slices.Clone(r.live) {
		r.cancelWatch(id)
	}
	r.syncWatches(all)
	time.Sleep(20 * time.Millisecond) // let any surplus real event show up
	for _, id := range all {
		got, err := r.c.received(id)
		if err != nil {
			r.t.Fatalf("watch stream: %v", err)
		}
		mc, me, mx := split(r.modelW[id])
		rc, re, rx := split(got)
		if diff := cmp.Diff(mc, rc, equateEmpty); diff != "" {
			r.fail("watch "+strconv.FormatInt(id, 10)+" created", diff)
		}
		if diff := cmp.Diff(me, re, equateEmpty); diff != "" {
			r.fail("watch "+strconv.FormatInt(id, 10)+" events", diff)
		}
		if diff := cmp.Diff(mx, rx, equateEmpty); diff != "" {
			r.fail("watch "+strconv.FormatInt(id, 10)+" canceled", diff)
		}
		r.events += len(me)
	}
	for _, id := range g.leases {
		if _, ok := r.m.LeaseDeadline(id); ok {
			r.apply(simkv.Request{LeaseRevoke: &simkv.LeaseRevokeRequest{ID: id}})
		}
	}
}

func (r *runner) sequence(seq, nops int) {
	r.seq, r.op = seq, 0
	g := newGen(r.seed, seq, r.m)
	var all []int64
	for r.op < nops {
		switch n := g.pick(1000); {
		case n < 280:
			r.apply(simkv.Request{Range: g.rangeReq()})
		case n < 480:
			r.apply(simkv.Request{Put: g.putReq(g.key())})
		case n < 560:
			r.apply(simkv.Request{DeleteRange: g.deleteReq()})
		case n < 760:
			r.apply(simkv.Request{Txn: g.txn()})
		case n < 790:
			r.apply(simkv.Request{LeaseGrant: g.grant()})
		case n < 800:
			gr := g.shortGrant()
			if _, err := r.apply(simkv.Request{LeaseGrant: gr}); err == nil {
				r.apply(simkv.Request{LeaseRevoke: &simkv.LeaseRevokeRequest{ID: gr.ID}})
			}
		case n < 830:
			r.apply(simkv.Request{LeaseRevoke: &simkv.LeaseRevokeRequest{ID: g.leaseID()}})
		case n < 860:
			r.apply(simkv.Request{LeaseKeepAlive: &simkv.LeaseKeepAliveRequest{ID: g.leaseID()}})
		case n < 890:
			r.apply(simkv.Request{LeaseTimeToLive: &simkv.LeaseTimeToLiveRequest{ID: g.leaseID(), Keys: g.chance(0.7)}})
		case n < 900:
			r.apply(simkv.Request{LeaseLeases: &simkv.LeaseLeasesRequest{}})
		case n < 915:
			req := g.compactReq()
			r.clampCompact(req)
			if _, err := r.apply(simkv.Request{Compact: req}); err == nil {
				r.lastPhysical = req.Physical
			}
		case n < 975:
			if len(r.live) < 6 {
				r.watch(g.watchReq(r.lastPhysical))
			}
		default:
			if len(r.live) > 0 {
				r.cancelWatch(r.live[g.pick(len(r.live))])
			}
		}
		all = r.allWatches(all)
	}
	r.endSequence(g, all)
}

// allWatches adds the watches opened since last time.
func (r *runner) allWatches(all []int64) []int64 {
	for _, id := range r.live {
		if !slices.Contains(all, id) {
			all = append(all, id)
		}
	}
	return all
}

// TestConformance runs seeded random sequences of requests against simkv
// and a real etcd in lockstep and requires every answer and every watch
// event to be equal. SHARDSIM_CONF_SEED, SHARDSIM_CONF_SEQS and
// SHARDSIM_CONF_OPS change the seed (default 1), the number of sequences
// (default 200) and the requests per sequence (default 100).
func TestConformance(t *testing.T) {
	t.Parallel()
	srv := startEtcd(t)
	seed := uint64(envInt("SHARDSIM_CONF_SEED", 1))
	seqs := envInt("SHARDSIM_CONF_SEQS", 200)
	nops := envInt("SHARDSIM_CONF_OPS", 100)
	r := &runner{t: t, c: newClient(t, srv), m: simkv.NewStore(simkv.StoreConfig{}), seed: seed,
		modelW: map[int64][]simkv.WatchResponse{}, outcomes: map[string]int{}, pastStarts: map[int64]int64{}, lastPhysical: true, start: time.Now(),
		version: etcdtest.Version(t), differences: map[string]int{}}
	defer func() {
		if t.Failed() {
			t.Logf("etcd log tail:\n%s", tail(srv.log.String(), 3000))
		}
	}()
	for seq := 0; seq < seqs; seq++ {
		r.sequence(seq, nops)
	}
	for _, k := range slices.Sorted(maps.Keys(r.outcomes)) {
		t.Logf("%6d %s", r.outcomes[k], k)
	}
	t.Logf("etcd %s, seed %d: %d sequences, %d requests compared (%d skipped as etcd-crashing), %d watches, %d watch events compared, 0 divergences, %v",
		r.version, seed, seqs, r.requests, r.skipped, r.watches, r.events, time.Since(r.start).Round(time.Millisecond))
	for _, d := range slices.Sorted(maps.Keys(r.differences)) {
		t.Logf("documented difference from etcd 3.4: %s x%d", d, r.differences[d])
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
