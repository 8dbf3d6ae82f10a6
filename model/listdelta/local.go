package listdelta

import (
	"encoding/binary"

	"shardsim/model/bugs"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

// Local is a Backend over one voter's state machine, applied in place: a
// single group with no network, no leader changes and a clock that ticks
// once per commit. Unit tests and the model-based tests run the commands
// on it with the data plane's real conflict rule.
type Local struct {
	F     *fsm.FSM
	clock hlc.TS
	// Race, if set, runs once, before the call that matches it: a test
	// interleaves a racing command there.
	Race *Race
	// Clock is what Now returns (the shared-commit-ts variant's clock).
	Clock hlc.TS
}

// Race is a command a test runs in the middle of another: before the N-th
// (from 1) call of kind At ("get", "scan" or "commit").
type Race struct {
	At string
	N  int
	Fn func()
}

// before runs the race when call is the one it waits for.
func (l *Local) before(call string) {
	r := l.Race
	if r == nil || r.At != call {
		return
	}
	if r.N--; r.N > 0 {
		return
	}
	l.Race = nil
	r.Fn()
}

// NewLocal returns an empty store.
func NewLocal(set bugs.Set) *Local {
	return &Local{F: fsm.New(0, set), clock: hlc.Make(1000, 0)}
}

// Get implements Backend.
func (l *Local) Get(raw string, ts hlc.TS) (mvcc.Read, hlc.TS, error) {
	l.before("get")
	if ts == 0 {
		ts = l.clock
	}
	r, err := l.F.Read(raw, ts, fsm.ReadOpts{})
	return r, ts, err
}

// Scan implements Backend.
func (l *Local) Scan(fam keys.Family, rk string, raw keys.Span, ts hlc.TS, limit int) ([]mvcc.ScanRow, hlc.TS, error) {
	l.before("scan")
	if ts == 0 {
		ts = l.clock
	}
	rows, err := l.F.Scan(fam, keys.Exactly(rk), ts, fsm.ReadOpts{Raw: raw}, limit)
	return rows, ts, err
}

// Commit implements Backend: the transaction is committed in one phase at
// the next tick, its stamped slots filled with that timestamp.
func (l *Local) Commit(tx fsm.Txn) (hlc.TS, error) {
	l.before("commit")
	l.clock++
	tx.StartTS, tx.CommitTS, tx.OnePhase = l.clock, l.clock, true
	tx.Keys = StampKeys(tx.Keys, tx.Stamps, l.clock)
	r := l.F.Apply(fsm.Entry{Index: l.F.Applied + 1, Kind: fsm.KindCommit, Txn: &tx})
	if r.Err != nil {
		return 0, r.Err
	}
	return r.TS, nil
}

// Now implements Backend.
func (l *Local) Now() hlc.TS { return l.Clock }

// Backoff implements Backend.
func (l *Local) Backoff(int) {}

// Latest returns the last commit timestamp.
func (l *Local) Latest() hlc.TS { return l.clock }

// StampKeys returns keys with each stamp's slot holding ts, as a group
// leader fills them.
func StampKeys(ks []string, stamps []fsm.Stamp, ts hlc.TS) []string {
	if len(stamps) == 0 {
		return ks
	}
	out := append([]string(nil), ks...)
	for _, s := range stamps {
		if s.Key < 0 || s.Key >= len(out) || s.Offset < 0 || s.Offset+8 > len(out[s.Key]) {
			continue
		}
		b := []byte(out[s.Key])
		binary.BigEndian.PutUint64(b[s.Offset:], uint64(ts))
		out[s.Key] = string(b)
	}
	return out
}

var _ Backend = (*Local)(nil)
