package migrate

import (
	"errors"
	"fmt"
	"strconv"

	"shardsim/model/bugs"
	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/job"
	"shardsim/simclock"
	"shardsim/simkv"
)

// migrator drives the live SplitJob from the group-0 leader. It holds no
// state of its own that matters: every iteration works from the job record
// (reloaded after any error), every phase change is a CAS on the record,
// and every effect on a group is idempotent or guarded, so a migrator that
// crashed or lost leadership mid-step is simply replaced by another that
// resumes from the record. A migrator on a node that lost leadership but
// has not learned it keeps going until it does: its metadata CASes fail on
// the records the new one wrote, and its RPCs are what the groups' guards
// (batch sequence numbers, aborted-job refusals) are for.
type migrator struct {
	n        *Node
	ls       *leader
	t        *simclock.Task
	kv       simkv.KV
	cfg      Config
	bugs     bugs.Set
	failures int
	frozen   map[int][]int // the frozen-voter-set variant's first samples
	key      string        // the record key of job keyOf (jobKey; "": none made yet)
	keyOf    uint64
}

// jobKey returns the record key of job id, made once for the job the
// migrator saves over and over. It asks whether a key was made at all, not
// only for which id: a fresh migrator's keyOf is 0, and its key "" must
// not pass for job 0's (job ids start at 1, but a record of id 0 would
// otherwise be saved under the empty key).
func (m *migrator) jobKey(id uint64) string {
	if m.key == "" || m.keyOf != id {
		m.key, m.keyOf = job.Key(id), id
	}
	return m.key
}

// errNotYet means a step must wait for something (promotion, drain, a
// barrier) that is not an error.
var errNotYet = errors.New("not yet")

func (n *Node) startMigrator(ls *leader) {
	n.ctx.Go("migrator", func(t *simclock.Task) {
		m := &migrator{n: n, ls: ls, t: t, kv: n.meta.In(t), cfg: n.env.Cfg, bugs: n.env.Bugs, frozen: map[int][]int{}}
		m.run()
	})
}

func (m *migrator) alive() bool { return m.n.leads(0) == m.ls }

// log records kind with text as its free-text detail (one Text token, as
// Context.Log writes it), text built by the caller in a stack buffer: a
// line costs no formatting and no string.
func (m *migrator) log(kind string, text []byte) { m.t.Context().Rec(kind).TextBytes(text).End() }

// logPhase records a mig.phase line (appendPhaseLine).
func (m *migrator) logPhase(id uint64, from, to job.Phase, cat *catalog.Catalog) {
	var buf [256]byte // a catalog of a few routes fits
	m.log("mig.phase", appendPhaseLine(buf[:0], id, from, to, cat))
}

// appendPhaseLine appends the text of a mig.phase record,
// "j<id> <from>-><to>", followed by " catalog=<cat>" when the change
// published a catalog.
func appendPhaseLine(b []byte, id uint64, from, to job.Phase, cat *catalog.Catalog) []byte {
	b = strconv.AppendUint(append(b, 'j'), id, 10)
	b = append(append(b, ' '), from.String()...)
	b = append(append(b, "->"...), to.String()...)
	if cat != nil {
		b = cat.AppendTo(append(b, " catalog="...))
	}
	return b
}

func (m *migrator) nowMs() int64 { return int64(m.t.Local()) / 1e6 }

func (m *migrator) counters() *Counters { return m.n.env.Counters }

func (m *migrator) run() {
	var j job.SplitJob
	var rev int64
	loaded := false
	for m.alive() {
		if !loaded {
			var ok bool
			var err error
			j, rev, ok, err = LiveJob(m.kv)
			if err != nil {
				m.backoff()
				continue
			}
			if !ok {
				m.t.Sleep(m.cfg.Poll)
				continue
			}
			loaded = true
		}
		nj, nrev, err := m.step(j, rev)
		switch {
		case err == nil:
			m.failures = 0
			j, rev = nj, nrev
			if j.Phase.Terminal() {
				loaded = false
			}
		case errors.Is(err, errNotYet):
			m.t.Sleep(m.cfg.Poll / 2)
		case errors.Is(err, errConflict):
			loaded = false
		default:
			loaded = false
			m.failures++
			if m.failures >= m.cfg.StepRetries && j.Phase >= job.Planned && j.Phase < job.Done {
				m.toFailed(j, rev, err)
				m.failures = 0
				continue
			}
			m.backoff()
		}
	}
}

// backoff waits longer after each consecutive failure.
func (m *migrator) backoff() { m.t.Sleep(m.cfg.Backoff << min(m.failures, 5)) }

// save CASes j over the record at rev (and, with cat, the catalog over
// catRev) and returns the new revision. An answer that was lost is
// resolved by reading the record back; indeterminate says it was.
func (m *migrator) save(j job.SplitJob, rev int64, cat *catalog.Catalog, catRev int64) (int64, bool, error) {
	if err := j.Check(); err != nil {
		panic(err) // the migrator never builds a malformed record
	}
	j.Writes++
	k := m.jobKey(j.ID)
	var ps putSet
	guards := []guard{{k, rev}}
	ps.put(k, j.Encode())
	if cat != nil {
		guards = append(guards, guard{job.CatalogKey, catRev})
		ps.put(job.CatalogKey, cat.Encode())
	}
	return commitResolved(m.kv, guards, ps.list(), nil, k, ps.get(k))
}

// transition moves j to phase to (mutate adjusts the record first).
func (m *migrator) transition(j job.SplitJob, rev int64, to job.Phase, cat *catalog.Catalog, catRev int64, mutate func(*job.SplitJob)) (job.SplitJob, int64, error) {
	from := j.Phase
	j.Phase = to
	if mutate != nil {
		j = mutated(j, mutate)
	}
	nrev, _, err := m.save(j, rev, cat, catRev)
	if err != nil {
		return job.SplitJob{}, 0, err
	}
	j.Writes++
	if from != to || cat != nil {
		m.logPhase(j.ID, from, to, cat)
	}
	return j, nrev, nil
}

// mutated returns j as mutate changes it. It is kept out of transition
// (and not inlined there) because a record whose address goes to a
// function value lives on the heap, and most transitions change nothing
// but the phase.
//
//go:noinline
func mutated(j job.SplitJob, mutate func(*job.SplitJob)) job.SplitJob {
	mutate(&j)
	return j
}

// call sends req to group g's leader.
func (m *migrator) call(g int, req any) (any, error) {
	if !m.alive() {
		return nil, errs.ErrNotLeader
	}
	return m.n.env.Net.Call(m.t, g, req)
}

// callNode sends req to node itself.
func (m *migrator) callNode(node int, req any) (any, error) {
	if !m.alive() {
		return nil, errs.ErrNotLeader
	}
	return m.n.env.Net.CallNode(m.t, node, req)
}

func (m *migrator) toFailed(j job.SplitJob, rev int64, cause error) {
	if m.bugs.Has(bugs.MigrateFailedJobCollected) {
		// The wrong variant's job GC counts FAILED as finished: the job goes
		// to history with its guards and fence in place.
		_, _, _ = m.finish(j, rev, job.Failed)
		return
	}
	retry := j.Phase
	_, _, err := m.transition(j, rev, job.Failed, nil, 0, func(n *job.SplitJob) {
		n.RetryPhase, n.LastError = retry, cause.Error()
	})
	if err != nil {
		m.t.Sleep(m.cfg.Backoff)
	}
}

// step performs the next piece of work of j and returns the record after.
// It changes its own copy of j only: run keeps j for a step that fails,
// and the brackets, which the copies share, are changed in copies of their
// own (job.SplitJob.SetBracket, ResetBrackets).
func (m *migrator) step(j job.SplitJob, rev int64) (job.SplitJob, int64, error) {
	switch j.Phase {
	case job.Planned:
		return m.plan(j, rev)
	case job.Backfill:
		if j.AllBracketsDone() {
			return m.fence(j, rev)
		}
		return m.copyBatch(j, rev, 0, j.SnapshotTS)
	case job.Fence:
		return m.fenceApplied(j, rev)
	case job.DeltaCopy:
		if m.deltaDone(j) {
			return m.prepareCutover(j, rev)
		}
		return m.copyBatch(j, rev, j.DeltaFloor, j.FenceTS)
	case job.Cutover:
		return m.transition(j, rev, job.Cleanup, nil, 0, nil)
	case job.Cleanup:
		return m.cleanup(j, rev)
	case job.Failed:
		m.t.Sleep(m.cfg.FailedBackoff)
		return m.transition(j, rev, j.RetryPhase, nil, 0, func(n *job.SplitJob) {
			n.RetryPhase = 0
			n.Retries++
			if m.bugs.Has(bugs.MigrateRetryClearsGuards) {
				// The wrong variant starts a retry from a clean slate, as if
				// no guard had been armed.
				m.clearGuards(*n)
				n.ReadFence = job.FenceNone
			}
		})
	case job.Abandoning:
		return m.abandon(j, rev)
	}
	return j, rev, fmt.Errorf("job %d in unexpected phase %s", j.ID, j.Phase)
}

// finish moves j to its terminal phase: out of the live set into the
// bounded history, clearing the live-job pointer, in one transaction; the
// oldest history entries beyond the bound (count and age) go with it.
func (m *migrator) finish(j job.SplitJob, rev int64, to job.Phase) (job.SplitJob, int64, error) {
	hist, err := m.kv.Range(simkv.RangeRequest{Key: []byte(job.HistPrefix()), RangeEnd: []byte(job.HistPrefix() + "\xff"), KeysOnly: true})
	if err != nil {
		return j, rev, err
	}
	entries := make([]job.HistEntry, 0, len(hist.Kvs))
	for _, kv := range hist.Kvs {
		key := string(kv.Key)
		if ms, ok := job.ParseHistKey(key); ok {
			entries = append(entries, job.HistEntry{Key: key, TerminalMs: ms})
		}
	}
	now := m.nowMs()
	from := j.Phase
	j.Phase, j.TerminalAtMs = to, now
	if to == job.Failed {
		j.RetryPhase = from
	}
	j.Writes++
	hk := job.HistKey(now, j.ID)
	var ps putSet
	ps.put(hk, j.Encode())
	ps.put(job.LiveJobKey, job.EncodeID(0))
	evict := m.cfg.History.Evict(entries, now)
	k := m.jobKey(j.ID)
	dels := append([]string{k}, evict...)
	nrev, _, err := commitResolved(m.kv, []guard{{k, rev}}, ps.list(), dels, hk, ps.get(hk))
	if err != nil {
		return j, rev, err
	}
	m.counters().JobsCollected += len(evict)
	m.logPhase(j.ID, from, to, nil)
	return j, nrev, nil
}
