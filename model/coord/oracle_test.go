package coord

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"shardsim/simclock"
	"shardsim/simkv"
)

// The differential oracle: every operation runs on the reference and on
// the etcd backend, and the two must return the same result and events
// and leave the same durable state; the etcd backend's decoded state must
// also pass the property checkers (checker/coordcheck's CheckStep,
// CheckTenantStep and CheckAcceptedLease, installed by judges_ext_test.go)
// after every step.
//
// With faults on, the etcd side may additionally fail transiently. After a
// transient failure the operation may or may not have taken effect; the
// oracle finds out from the durable state alone (it must equal the
// reference's state before or after the operation, never anything else)
// and then retries the same call, as a client would: an idempotent call
// must eventually answer with the reference's result (a replay if the
// lost attempt had landed); a non-idempotent one whose effect is in place
// is not retried. If the retries run out with nothing applied, the
// reference is rolled back to its state before the call.

// oracleTimeUnit is the KV time of one logical unit in the oracle. Any
// unit works when the clocks advance together; a long one makes the slack
// between logical expiry and storage expiry (a unit plus LeaseSlack) far
// larger than all backoff sleeps can ever drift.
const oracleTimeUnit = time.Minute

// oracleRetries is how often the oracle repeats a transiently failed call.
const oracleRetries = 8

// pair is a reference and an etcd backend driven in lockstep.
type pair struct {
	ref    *Reference
	etcd   *Etcd               // under test; over the faulty KV in fault mode
	look   *Etcd               // fault-free inspector over the same store and clock
	base   simkv.KV            // the KV under everything: direct, or a real etcd
	direct *simkv.Direct       // nil over a real etcd
	faulty *simkv.DirectFaulty // nil without faults (or over a real etcd)
	lossy  *lossyKV            // request faults over a real etcd (nil: none)
	ecfg   EtcdConfig
	now    LogicalTime
	prev   Snapshot // the etcd backend's durable state after the last step
	stats  *oracleStats
	racers EtcdStats // counters of the coordinators built for races
}

// oracleStats counts what the oracle saw, over all checks of a test.
type oracleStats struct {
	checks, steps        int
	races, interleaved   int // races run, and of those, races where y ran inside x
	transient            int // transient etcd failures seen by the oracle
	lostAnswers          int // ... after which the effect was in place
	replayedAfterLoss    int // idempotent retries answered from the op-log
	rolledBack           int // calls given up with nothing applied
	faults               simkv.DirectFaultStats
	etcd                 EtcdStats
	byOp                 map[string]int
	errorsByCode         map[Code]int
	maxTransientAttempts int
}

func newOracleStats() *oracleStats {
	return &oracleStats{byOp: map[string]int{}, errorsByCode: map[Code]int{}}
}

// pairOptions shape the KV of the backend under test.
type pairOptions struct {
	faults  *simkv.DirectFaults // draw request faults from choices
	choices *simclock.Choices
	wrap    func(simkv.KV) simkv.KV // wrap the KV (scripted faults)
	// real, when set, runs the etcd side over a real etcd (see
	// oracle_real_test.go) in a namespace of its own, instead of over a
	// fresh simulated store.
	real *realEtcd
}

// newPair builds a pair over a fresh store.
func newPair(cfg Config, ecfg EtcdConfig, opts pairOptions, stats *oracleStats) (*pair, error) {
	ref, err := NewReference(cfg)
	if err != nil {
		return nil, err
	}
	ecfg.Config = cfg
	ecfg.TimeUnit = oracleTimeUnit
	if err := ecfg.Validate(); err != nil {
		return nil, err
	}
	p := &pair{ref: ref, ecfg: ecfg, stats: stats}
	if opts.real != nil {
		p.ecfg.Namespace = opts.real.namespace()
		p.base = opts.real.kv
	} else {
		p.direct = simkv.NewDirect(simkv.NewStore(simkv.StoreConfig{}), 0)
		p.base = p.direct
	}
	ecfg = p.ecfg
	p.look = NewEtcd(p.base, instance(ecfg, 1))
	kv := p.base
	switch {
	case opts.faults != nil && p.direct != nil:
		p.faulty = simkv.NewDirectFaulty(p.direct, *opts.faults, opts.choices)
		kv = p.faulty
	case opts.faults != nil:
		p.lossy = &lossyKV{KV: p.base, faults: *opts.faults, choices: opts.choices}
		kv = p.lossy
	}
	if opts.wrap != nil {
		kv = opts.wrap(kv)
	}
	p.etcd = NewEtcd(kv, instance(ecfg, 2))
	stats.checks++
	return p, nil
}

// finish adds the pair's KV-level counters to the stats.
func (p *pair) finish() {
	p.stats.etcd.add(p.etcd.Stats())
	p.stats.etcd.add(p.racers)
	if p.lossy != nil {
		f := &p.stats.faults
		f.Calls += p.lossy.stats.Calls
		f.LostRequests += p.lossy.stats.LostRequests
		f.LostResponses += p.lossy.stats.LostResponses
		f.Refused += p.lossy.stats.Refused
	}
	if p.faulty != nil {
		f, g := &p.stats.faults, p.faulty.Stats()
		f.Calls += g.Calls
		f.LostRequests += g.LostRequests
		f.LostResponses += g.LostResponses
		f.Refused += g.Refused
		f.LeaderChanges += g.LeaderChanges
		f.LeaderApplied += g.LeaderApplied
	}
}

func (e *EtcdStats) add(s EtcdStats) {
	e.Requests += s.Requests
	e.Transport += s.Transport
	e.Conflicts += s.Conflicts
	e.Ambiguous += s.Ambiguous
	e.Landed += s.Landed
	e.Grants += s.Grants
	e.KeepAlives += s.KeepAlives
	e.Revokes += s.Revokes
}

// advance moves logical time and the KV's clock together. A real etcd's
// clock is the wall's: its leases outlive every logical lease of a test
// (a logical unit is a minute of TTL), so only logical time moves.
func (p *pair) advance(d LogicalDuration) {
	p.now = p.now.Add(d)
	if p.direct == nil {
		return
	}
	want := simclock.Time(int64(p.now) * int64(oracleTimeUnit))
	if lag := want.Sub(p.direct.Now()); lag > 0 {
		p.direct.Advance(lag)
	}
}

// call is one operation, applicable to either backend.
type call struct {
	name   string
	tenant TenantID            // the caller's tenant
	idem   bool                // carries an op id: safe to retry after a transient failure
	gate   Opt[Lease]          // the lease a lease-gated call presents
	target Opt[tenantShardKey] // the shard the call is about, if one
	do     func(c Coordinator, now LogicalTime) result
}

// result is a call's answer in comparable form.
type result struct {
	Value  any
	Events []Event
	Err    string // type and message; "" on success
	code   Code
	replay bool // an idempotent call answered from the op-log
}

func resultOf(v any, evs []Event, err error) result {
	r := result{Value: v, Events: evs}
	if err != nil {
		r.Value, r.Events = nil, nil
		r.Err = fmt.Sprintf("%T: %v", err, err)
		r.code = CodeOf(err)
	}
	switch x := v.(type) {
	case Outcome:
		r.replay = x == Replayed
	case SplitReplaceResult:
		r.replay = x.Outcome == Replayed
	case SplitResidualResult:
		r.replay = x.Outcome == Replayed
	}
	return r
}

// readOf is resultOf for a read, which has no events.
func readOf(v any, err error) result { return resultOf(v, nil, err) }

// asReplay is r as a replay of it answers: outcome Replayed, no events.
func asReplay(r result) result {
	switch x := r.Value.(type) {
	case Outcome:
		r.Value = Replayed
	case SplitReplaceResult:
		x.Outcome = Replayed
		r.Value = x
	case SplitResidualResult:
		x.Outcome = Replayed
		r.Value = x
	}
	r.Events, r.replay = nil, true
	return r
}

// cmpOpts compare protocol values structurally; op-logs by their entries
// and redacted keys by their bytes.
var cmpOpts = []cmp.Option{
	cmp.Transformer("shardOpLog", func(l ShardOpLog) []OpLogEntry { return l.Entries() }),
	cmp.Transformer("runOpLog", func(l RunOpLog) []OpLogEntry { return l.Entries() }),
	cmp.Transformer("redacted", func(k RedactedKey) []byte { return k.Bytes() }),
	cmp.AllowUnexported(result{}),
	cmpopts.IgnoreFields(result{}, "code", "replay"),
	cmpopts.IgnoreFields(Snapshot{}, "At", "Bindings"),
	cmpopts.EquateEmpty(),
}

// stateDiff describes how two snapshots' protocol state differ ("" when
// equal). Encodings are compared first; cmp explains a difference.
func stateDiff(a, b *Snapshot) string {
	if sameState(a, b) {
		return ""
	}
	if d := cmp.Diff(a, b, cmpOpts...); d != "" {
		return d
	}
	return "snapshots differ in encoding only"
}

func sameState(a, b *Snapshot) bool {
	if len(a.Shards) != len(b.Shards) || len(a.Runs) != len(b.Runs) || len(a.Claims) != len(b.Claims) {
		return false
	}
	for i := range a.Shards {
		if !bytes.Equal(EncodeShardRecord(&a.Shards[i]), EncodeShardRecord(&b.Shards[i])) {
			return false
		}
	}
	for i := range a.Runs {
		if !bytes.Equal(EncodeRunRecord(&a.Runs[i]), EncodeRunRecord(&b.Runs[i])) {
			return false
		}
	}
	for i := range a.Claims {
		if a.Claims[i] != b.Claims[i] {
			return false
		}
	}
	return true
}

// step runs c on both sides and checks everything. It returns the result
// the caller of the etcd backend finally saw.
func (p *pair) step(c call) (result, error) {
	p.stats.steps++
	p.stats.byOp[c.name]++
	before := p.ref.Clone()
	beforeSnap := before.Snapshot(p.now)
	want := c.do(p.ref, p.now)
	afterSnap := p.ref.Snapshot(p.now)

	var got result
	definite, lost := false, false
	for i := 0; i < oracleRetries; i++ {
		got = c.do(p.etcd, p.now)
		if got.code != CodeBackendTransient {
			definite = true
			break
		}
		p.stats.transient++
		p.stats.maxTransientAttempts = max(p.stats.maxTransientAttempts, i+1)
		snap, err := p.look.Snapshot(p.now)
		if err != nil {
			return got, fmt.Errorf("%s: inspecting after a transient failure: %v", c.name, err)
		}
		switch {
		case sameState(&snap, &beforeSnap):
			// Nothing took effect (or nothing was to): retry.
		case sameState(&snap, &afterSnap):
			lost = true
		default:
			// A partial effect. Name the property it breaks, if any.
			if err := judgeStep(&p.prev, &snap); err != nil {
				return got, fmt.Errorf("%s failed transiently (%s) leaving a partial effect: %w", c.name, got.Err, err)
			}
			return got, fmt.Errorf("%s failed transiently (%s) leaving a state that is neither before nor after it:\nvs after (-ref +etcd):\n%s",
				c.name, got.Err, stateDiff(&afterSnap, &snap))
		}
		if lost && !c.idem {
			break // the effect is in place and the call cannot be repeated
		}
	}

	expect := want
	switch {
	case definite && lost:
		// An idempotent call repeated after its first attempt landed
		// unseen must replay the first result: the same value, or the
		// same refusal (a logged one answers from the op-log, with its
		// code but not the original's details).
		p.stats.replayedAfterLoss++
		if want.code != codeNone {
			if got.code != want.code {
				return got, fmt.Errorf("%s: retry after a lost answer refused with %q, the first attempt with %q", c.name, got.Err, want.Err)
			}
			break
		}
		expect = asReplay(want)
		fallthrough
	case definite:
		if d := cmp.Diff(expect, got, cmpOpts...); d != "" {
			return got, fmt.Errorf("%s: results differ (-ref +etcd):\n%s", c.name, d)
		}
	case lost:
		p.stats.lostAnswers++
	default:
		p.ref = before
		afterSnap = beforeSnap
		p.stats.rolledBack++
	}
	if got.code != codeNone {
		p.stats.errorsByCode[got.code]++
	}

	snap, err := p.look.Snapshot(p.now)
	if err != nil {
		return got, fmt.Errorf("%s: inspecting: %v", c.name, err)
	}
	if d := stateDiff(&afterSnap, &snap); d != "" {
		return got, fmt.Errorf("%s: durable states differ (-ref +etcd):\n%s", c.name, d)
	}
	if err := p.checkProperties(c, want, definite || lost, &snap); err != nil {
		return got, fmt.Errorf("%s: %w", c.name, err)
	}
	if got.Err != "" {
		var named []RunID
		if c.target.Set {
			named = append(named, c.target.Val.Key.Run)
		}
		if c.gate.Set {
			named = append(named, c.gate.Val.Run)
		}
		if err := judges().Refusal(&snap, c.tenant, named, got.Err); err != nil {
			return got, fmt.Errorf("%s: %w", c.name, err)
		}
	}
	p.prev = snap
	return got, nil
}

// checkProperties runs the property checkers on the step from p.prev to
// snap made by c, whose reference result was want; took says whether the
// call took effect on the etcd side (or was rolled back).
func (p *pair) checkProperties(c call, want result, took bool, snap *Snapshot) error {
	if err := judgeStep(&p.prev, snap); err != nil {
		return err
	}
	if err := judgeTenantStep(&p.prev, snap, c.tenant); err != nil {
		return err
	}
	if c.gate.Set && took && want.code == codeNone && !want.replay {
		return judgeAcceptedLease(&p.prev, c.gate.Val)
	}
	return nil
}

// report renders the stats for a test log.
func (s *oracleStats) report() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "checks=%d steps=%d races=%d (interleaved %d) transient=%d lost-answers=%d replayed-after-loss=%d rolled-back=%d max-attempts=%d\n",
		s.checks, s.steps, s.races, s.interleaved, s.transient, s.lostAnswers, s.replayedAfterLoss, s.rolledBack, s.maxTransientAttempts)
	e := s.etcd
	fmt.Fprintf(&b, "etcd: requests=%d transport-errors=%d cas-conflicts=%d ambiguous-txns=%d landed=%d grants=%d keepalives=%d revokes=%d\n",
		e.Requests, e.Transport, e.Conflicts, e.Ambiguous, e.Landed, e.Grants, e.KeepAlives, e.Revokes)
	f := s.faults
	if f.Calls > 0 {
		fmt.Fprintf(&b, "faults: calls=%d lost-requests=%d lost-responses=%d refused=%d leader-changes=%d (applied %d)\n",
			f.Calls, f.LostRequests, f.LostResponses, f.Refused, f.LeaderChanges, f.LeaderApplied)
	}
	fmt.Fprintf(&b, "ops:")
	for _, name := range sortedNames(s.byOp) {
		fmt.Fprintf(&b, " %s=%d", name, s.byOp[name])
	}
	fmt.Fprintf(&b, "\nerrors:")
	for c := Code(1); c < codeEnd; c++ {
		if n := s.errorsByCode[c]; n > 0 {
			fmt.Fprintf(&b, " %q=%d", c.String(), n)
		}
	}
	return b.String()
}

func sortedNames(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// race runs x and y as two coordinators racing over one store (fault-free
// mode only): x runs on its own Etcd, whose KV runs all of y, on another
// Etcd, just before x's first write transaction goes out. If that happened,
// y completed before x committed and x's compares must notice whatever y
// changed that x had read, so the history is y then x; if x never wrote, it
// decided on what it read before y ran, and the history is x then y. The
// reference runs that order and everything must agree.
func (p *pair) race(x, y call) (xGot, yGot result, err error) {
	p.stats.steps += 2
	p.stats.races++
	p.stats.byOp["race_"+x.name]++
	p.stats.byOp["interloper_"+y.name]++
	fired := false
	h := &hookKV{inner: p.base, beforeWrite: func(int) {
		if !fired {
			fired = true
			yGot = y.do(p.look, p.now)
		}
	}}
	racer := NewEtcd(h, instance(p.ecfg, 2+uint64(p.stats.races)))
	xGot = x.do(racer, p.now)
	p.racers.add(racer.Stats())
	var xWant, yWant result
	if fired {
		p.stats.interleaved++
		yWant = y.do(p.ref, p.now)
		xWant = x.do(p.ref, p.now)
	} else {
		xWant = x.do(p.ref, p.now)
		yWant = y.do(p.ref, p.now)
		yGot = y.do(p.look, p.now)
	}
	if d := cmp.Diff(xWant, xGot, cmpOpts...); d != "" {
		return xGot, yGot, fmt.Errorf("race %s (interleaved=%t): results of %s differ (-ref +etcd):\n%s", x.name, fired, x.name, d)
	}
	if d := cmp.Diff(yWant, yGot, cmpOpts...); d != "" {
		return xGot, yGot, fmt.Errorf("race %s (interleaved=%t): results of %s differ (-ref +etcd):\n%s", x.name, fired, y.name, d)
	}
	snap, err := p.look.Snapshot(p.now)
	if err != nil {
		return xGot, yGot, err
	}
	want := p.ref.Snapshot(p.now)
	if d := stateDiff(&want, &snap); d != "" {
		return xGot, yGot, fmt.Errorf("race %s/%s (interleaved=%t): durable states differ (-ref +etcd):\n%s", x.name, y.name, fired, d)
	}
	if err := judgeStep(&p.prev, &snap); err != nil {
		return xGot, yGot, err
	}
	p.prev = snap
	return xGot, yGot, nil
}
