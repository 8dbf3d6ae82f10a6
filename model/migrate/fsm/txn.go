package fsm

import (
	"shardsim/model/bugs"
	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
	"shardsim/model/migrate/wire"
)

// Transactions in the shape seed 000 and elastickv use. PREPARE admits a
// start timestamp and a commit timestamp fixed up front (issued by the
// leader, or supplied by the caller) and writes a `!txn|lock|<key>` row per
// key; COMMIT writes the committed versions at the commit timestamp, drops
// the locks and writes the commit record `!txn|cmt|<primary>\x00<start>`;
// ROLLBACK drops the locks and writes `!txn|rb|<primary>\x00<start>`. A read
// at or above a pending lock's commit timestamp cannot be answered yet
// (ErrLocked). Lock rows are drained before a migration's fence_ts, never
// exported.

// lockInfo is a decoded lock row.
type lockInfo struct {
	txn, primary  string
	start, commit hlc.TS
}

const lockTag = 'L'

func encodeLock(l lockInfo) string {
	w := wire.NewWriter(lockTag, 1)
	w.String(l.txn)
	w.String(l.primary)
	w.Uint(uint64(l.start))
	w.Uint(uint64(l.commit))
	return string(w.Done())
}

func decodeLock(s string) (lockInfo, bool) {
	r := wire.MakeReader([]byte(s), lockTag, 1)
	l := lockInfo{txn: r.String(), primary: r.String(), start: hlc.TS(r.Uint()), commit: hlc.TS(r.Uint())}
	return l, r.Close() == nil
}

// LockKey is the raw key of user key uk's lock row.
func LockKey(uk string) string { return keys.Encode(keys.FamilyTxnLock, uk, "") }

// lockPrefix is what LockKey puts before the user key (the lock family is
// not length-prefixed).
var lockPrefix = keys.FamilyTxnLock.Prefix()

// CommitRecordKey is the raw key of a transaction's commit record (under
// its primary's route).
func CommitRecordKey(primary, txn string) string {
	return keys.Encode(keys.FamilyTxnCommit, primary, txn)
}

// RollbackRecordKey is the raw key of a transaction's rollback record.
func RollbackRecordKey(primary, txn string) string {
	return keys.Encode(keys.FamilyTxnRollback, primary, txn)
}

// lock returns user key uk's pending lock, if any.
func (f *FSM) lock(uk string) (lockInfo, bool) {
	vs := f.Store.VersionsJoined(lockPrefix, uk) // LockKey(uk), probed without building it
	if len(vs) == 0 {
		return lockInfo{}, false
	}
	return decodeLock(vs[0].Value)
}

// lockFor is lock(uk) for a step of transaction t: a lock row holding t's
// own lock value (Txn.lockValue) is t's lock, known without decoding it
// (the encoding is one-to-one), which is the common case of a commit or
// rollback finding its locks; any other value is decoded.
func (f *FSM) lockFor(uk string, t *Txn) (lockInfo, bool) {
	vs := f.Store.VersionsJoined(lockPrefix, uk) // LockKey(uk), probed without building it
	if len(vs) == 0 {
		return lockInfo{}, false
	}
	if own := t.lockValue(); vs[0].Value == own.value {
		return own.info, true
	}
	return decodeLock(vs[0].Value)
}

// lockValue is a lock row's value and the lock it encodes.
type lockValue struct {
	info  lockInfo
	value string
}

// lockValue returns the value of the lock rows t's prepare writes (its id
// and primary, start and commit timestamps, encoded). It is encoded once
// per transaction step, not once per voter and key, and made anew (never
// changed: copies of t may share it) when those fields differ from what it
// was made of.
func (t *Txn) lockValue() *lockValue {
	info := lockInfo{txn: t.ID, primary: t.Primary, start: t.StartTS, commit: t.CommitTS}
	if t.lock == nil || t.lock.info != info {
		t.lock = &lockValue{info: info, value: encodeLock(info)}
	}
	return t.lock
}

// txnKeys is the raw keys of rows a transaction step writes or probes
// besides its own keys: its commit and rollback records and its keys' lock
// rows. Each is made once per step, on first use, and shared by every
// voter that applies the step (they depend on the step alone). A holder
// checks a key against its own fields before using it, and fills an empty
// one in place, but never replaces one: copies of a Txn may share the
// struct, and one whose fields differ makes its own (see Txn.rowKeys).
type txnKeys struct {
	primary, id      string   // what commit and rollback are made of
	commit, rollback string   // CommitRecordKey and RollbackRecordKey ("": not made yet)
	locks            []string // LockKey of each key ("": not made yet)
	// lockRoom holds locks for a step of few keys, so that the struct and
	// its locks are one allocation.
	lockRoom [txnKeysRoom]string
}

// txnKeysRoom is how many keys' lock keys a txnKeys holds without a slice
// of its own.
const txnKeysRoom = 2

// newTxnKeys returns txnKeys for primary and id with an empty lock key
// for each of n keys.
func newTxnKeys(primary, id string, n int) *txnKeys {
	k := &txnKeys{primary: primary, id: id}
	if n <= txnKeysRoom {
		k.locks = k.lockRoom[:n:n] // its own window: locks never grow
	} else {
		k.locks = make([]string, n)
	}
	return k
}

// rowKeys returns t's txnKeys, new ones if t has none or its primary, id
// or number of keys differ from what they were made for.
func (t *Txn) rowKeys() *txnKeys {
	if k := t.keys; k != nil && k.primary == t.Primary && k.id == t.ID && len(k.locks) == len(t.Keys) {
		return k
	}
	t.keys = newTxnKeys(t.Primary, t.ID, len(t.Keys))
	return t.keys
}

// commitKey returns CommitRecordKey(t.Primary, t.ID).
func (t *Txn) commitKey() string {
	k := t.rowKeys()
	if k.commit == "" {
		k.commit = CommitRecordKey(t.Primary, t.ID)
	}
	return k.commit
}

// rollbackKey returns RollbackRecordKey(t.Primary, t.ID).
func (t *Txn) rollbackKey() string {
	k := t.rowKeys()
	if k.rollback == "" {
		k.rollback = RollbackRecordKey(t.Primary, t.ID)
	}
	return k.rollback
}

// lockKey returns LockKey(t.Keys[i]).
func (t *Txn) lockKey(i int) string {
	k := t.rowKeys()
	uk := t.Keys[i]
	switch l := k.locks[i]; {
	case l == "":
		k.locks[i] = LockKey(uk)
	case len(l) != len(lockPrefix)+len(uk) || l[len(lockPrefix):] != uk:
		// Made for another key at i (a copy of t that changed its keys
		// shares the struct): t makes its own, keeping the records.
		own := newTxnKeys(k.primary, k.id, len(t.Keys))
		own.commit, own.rollback = k.commit, k.rollback
		own.locks[i] = LockKey(uk)
		t.keys = own
		return own.locks[i]
	}
	return k.locks[i]
}

// eachLock calls fn for every pending lock whose key lies in span.
func (f *FSM) eachLock(span keys.Span, fn func(uk string, l lockInfo)) {
	b := keys.BracketFor(keys.FamilyTxnLock, span)
	f.Store.Ascend(b.Raw.Start, b.Raw.End, func(k string, vs []mvcc.Version) bool {
		if keys.InBracket(k, b, span) && len(vs) > 0 {
			if l, ok := decodeLock(vs[0].Value); ok {
				fn(keys.RouteKey(k), l)
			}
		}
		return true
	})
}

// LockCount returns how many locks are pending in span.
func (f *FSM) LockCount(span keys.Span) int {
	n := 0
	f.eachLock(span, func(string, lockInfo) { n++ })
	return n
}

// Locks returns the pending locks in span as (key, transaction, primary,
// start) tuples, in key order (the migrator resolves stale ones).
func (f *FSM) Locks(span keys.Span) []LockRow {
	var out []LockRow
	f.eachLock(span, func(uk string, l lockInfo) {
		out = append(out, LockRow{Key: uk, Txn: l.txn, Primary: l.primary, StartTS: l.start, CommitTS: l.commit})
	})
	return out
}

// LockRow describes one pending lock.
type LockRow struct {
	Key, Txn, Primary string
	StartTS, CommitTS hlc.TS
}

// record returns the newest version of raw, live or staged under job.
func (f *FSM) record(raw string, staging uint64) (mvcc.Version, bool) {
	if f.bugs.Has(bugs.MigrateLiveOnlyTxnProbe) {
		staging = 0
	}
	return f.newest(raw, staging)
}

func (f *FSM) applyPrepare(t *Txn) Result {
	if _, ok := f.record(t.rollbackKey(), t.Staging); ok {
		return Result{Err: errs.ErrTxnAborted}
	}
	if l, ok := f.lockFor(t.Keys[0], t); ok && l.txn == t.ID {
		return Result{Duplicate: true, TS: t.CommitTS}
	}
	if err := f.validate(t, t.ID); err != nil {
		return Result{Err: err}
	}
	l := t.lockValue().value
	for i, k := range t.Keys {
		f.Store.Put(t.lockKey(i), mvcc.Version{TS: t.StartTS, Value: l})
		if !f.bugs.Has(bugs.MigrateFloorPrimariesOnly) || k == t.Primary {
			f.track(k, t.CommitTS) // the wrong variant tracks a transaction under its primary only
		}
	}
	f.committed(t.StartTS)
	return Result{TS: t.CommitTS}
}

// lockedByUs reports whether every key of t holds t's lock, and the lock.
func (f *FSM) lockedByUs(t *Txn) (lockInfo, bool) {
	var first lockInfo
	for i, k := range t.Keys {
		l, ok := f.lockFor(k, t)
		if !ok || l.txn != t.ID {
			return lockInfo{}, false
		}
		if i == 0 {
			first = l
		}
	}
	return first, true
}

func (f *FSM) applyCommit(t *Txn) Result {
	if t.OnePhase {
		return f.applyOnePhase(t)
	}
	if l, ok := f.lockedByUs(t); ok {
		puts := make([]mvcc.Row, 0, len(t.Keys)+1) // the keys and the commit record
		for i, k := range t.Keys {
			v := mvcc.Version{TS: l.commit, Value: t.Values[i], Tombstone: t.Deletes[i]}
			f.Store.Put(k, v)
			f.Store.Delete(t.lockKey(i), l.start)
			puts = append(puts, mvcc.Row{Key: k, Version: v})
		}
		rec := mvcc.Row{Key: t.commitKey(), Version: mvcc.Version{TS: l.commit, Value: t.ID}}
		f.Store.Put(rec.Key, rec.Version)
		f.committed(l.commit)
		return Result{TS: l.commit, Puts: append(puts, rec)}
	}
	if v, ok := f.record(t.commitKey(), t.Staging); ok && v.Value == t.ID {
		return Result{Duplicate: true, TS: v.TS} // a retried COMMIT whose first attempt applied
	}
	if _, ok := f.record(t.rollbackKey(), t.Staging); ok {
		if f.bugs.Has(bugs.MigrateRollbackProvesCommit) {
			return Result{Duplicate: true, TS: t.CommitTS} // the wrong variant takes any marker as proof
		}
		return Result{Err: errs.ErrTxnAborted}
	}
	return Result{Err: errs.ErrTxnNotFound}
}

func (f *FSM) applyRollback(t *Txn) Result {
	if v, ok := f.record(t.commitKey(), t.Staging); ok && v.Value == t.ID {
		return Result{Err: errs.ErrTxnCommitted}
	}
	for i, k := range t.Keys {
		if l, ok := f.lockFor(k, t); ok && l.txn == t.ID {
			f.Store.Delete(t.lockKey(i), l.start)
		}
	}
	rb := t.rollbackKey()
	if _, ok := f.record(rb, t.Staging); !ok {
		v := mvcc.Version{TS: t.AbortTS, Value: t.ID}
		f.Store.Put(rb, v)
		f.committed(t.AbortTS)
		return Result{Puts: []mvcc.Row{{Key: rb, Version: v}}}
	}
	return Result{}
}

// applyOnePhase prepares and commits t in one step: the same checks as a
// prepare, then the versions and the commit record at once.
func (f *FSM) applyOnePhase(t *Txn) Result {
	recKey := t.commitKey()
	if v, ok := f.record(recKey, t.Staging); ok && v.Value == t.ID {
		return Result{Duplicate: true, TS: v.TS}
	}
	if err := f.validate(t, ""); err != nil {
		return Result{Err: err}
	}
	puts := make([]mvcc.Row, 0, len(t.Keys)+1) // the keys and the commit record
	for i, k := range t.Keys {
		v := mvcc.Version{TS: t.CommitTS, Value: t.Values[i], Tombstone: t.Deletes[i]}
		f.Store.Put(k, v)
		f.track(k, t.CommitTS)
		puts = append(puts, mvcc.Row{Key: k, Version: v})
	}
	rec := mvcc.Row{Key: recKey, Version: mvcc.Version{TS: t.CommitTS, Value: t.ID}}
	f.Store.Put(rec.Key, rec.Version)
	f.committed(t.CommitTS)
	return Result{TS: t.CommitTS, Puts: append(puts, rec)}
}

// validate is the conflict rule of the package comment, then the
// apply-time admission of every key t writes (lockOwner: the lock t may
// hold itself).
func (f *FSM) validate(t *Txn, lockOwner string) error {
	for _, k := range t.Keys {
		if v, ok := f.newest(k, t.Staging); ok && v.TS > t.ReadTS {
			return errs.ErrTxnConflict
		}
		if err := f.admit(k, t.CommitTS, t.Staging, lockOwner); err != nil {
			return err
		}
	}
	if f.readSetChanged(t) {
		return errs.ErrTxnConflict
	}
	return nil
}

// readSetChanged reports whether something t read has changed since its
// snapshot: a newer version of a key read, a newer version (a phantom
// included) in a range read, or another transaction's lock on a key read.
func (f *FSM) readSetChanged(t *Txn) bool {
	for _, r := range t.Reads {
		if r.Point() {
			if v, ok := f.newest(r.Start, t.Staging); ok && v.TS > t.ReadTS {
				return true
			}
			if l, ok := f.lock(r.Start); ok && l.txn != t.ID {
				return true
			}
			continue
		}
		if f.newerIn(r.Start, r.End, t.ReadTS, t.Staging) {
			return true
		}
		locked := false
		f.Store.Ascend(LockKey(r.Start), LockKey(r.End), func(_ string, vs []mvcc.Version) bool {
			if l, ok := decodeLock(vs[0].Value); ok && l.txn != t.ID {
				locked = true
			}
			return !locked
		})
		if locked {
			return true
		}
	}
	return false
}

// newerIn reports whether some key in [start, end), live or staged under
// job staging, has a version newer than ts.
func (f *FSM) newerIn(start, end string, ts hlc.TS, staging uint64) bool {
	newer := false
	scan := func(lo, hi string) {
		f.Store.Ascend(lo, hi, func(_ string, vs []mvcc.Version) bool {
			newer = vs[0].TS > ts
			return !newer
		})
	}
	scan(start, end)
	if !newer && staging != 0 {
		p := keys.StagePrefix(staging)
		scan(p+start, p+end)
	}
	return newer
}

// CommitProof reports whether t may commit through a write fence: every key
// holds t's lock (a transaction prepared before the fence), or t's commit
// record exists (a retry of a commit that already applied).
func (f *FSM) CommitProof(t *Txn) bool {
	if _, ok := f.lockedByUs(t); ok {
		return true
	}
	v, ok := f.record(t.commitKey(), t.Staging)
	return ok && v.Value == t.ID
}

// HoldsLock reports whether some key of t holds t's lock.
func (f *FSM) HoldsLock(t *Txn) bool {
	for _, k := range t.Keys {
		if l, ok := f.lockFor(k, t); ok && l.txn == t.ID {
			return true
		}
	}
	return false
}
