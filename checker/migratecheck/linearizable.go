package migratecheck

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"

	"shardsim/checker"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/mvcc"
	"shardsim/property"
	"shardsim/simclock"
)

// KeyOp is one client operation on one raw key, as the history recorder
// saw it: a write (put or delete) or a latest read. Snapshot reads at older
// timestamps are not linearizability operations (M.SnapshotReads judges
// them).
type KeyOp struct {
	Client int
	Key    string
	Call   simclock.Time
	Return simclock.Time // ignored for ambiguous writes
	Write  bool
	Delete bool
	Op     string // a write's unique operation id (its value)

	Ambiguous bool // a write whose outcome the client could not learn

	ReadTS hlc.TS // a read's timestamp
	Found  bool
	Value  string
}

// mInput and mOutput are the porcupine operation payloads.
type mInput struct {
	write    bool
	delete   bool
	op       string
	expireAt hlc.TS
	readTS   hlc.TS
}

type mOutput struct {
	found bool
	value string
}

// stepKey is KeyModel's step: a write replaces the key's latest version; a
// read sees it unless it is a delete or expired at the read's timestamp.
func stepKey(s mState, in mInput, out mOutput) (bool, mState) {
	if in.write {
		return true, mState{has: true, delete: in.delete, value: in.op, expireAt: in.expireAt}
	}
	vis := s.has && !s.delete && (s.expireAt == 0 || in.readTS < s.expireAt)
	if vis != out.found {
		return false, s
	}
	return !vis || s.value == out.value, s
}

// mState is the key's latest write in linearization order.
type mState struct {
	has      bool
	delete   bool
	value    string
	expireAt hlc.TS
}

// KeyModel is the sequential specification of one raw key under
// the migration: writes replace the key's latest version; a latest read
// at ts sees it unless it is a delete or expired at ts.
var KeyModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var ks []string
		for _, op := range h {
			k := op.Metadata.(string)
			if _, ok := byKey[k]; !ok {
				ks = append(ks, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		sort.Strings(ks)
		out := make([][]porcupine.Operation, 0, len(ks))
		for _, k := range ks {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() any { return mState{} },
	Step: func(state, input, output any) (bool, any) {
		return stepKey(state.(mState), input.(mInput), output.(mOutput))
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(mInput), output.(mOutput)
		if in.write {
			if in.delete {
				return "delete " + in.op
			}
			return "put " + in.op
		}
		if !out.found {
			return fmt.Sprintf("read@%s -> none", in.readTS)
		}
		return fmt.Sprintf("read@%s -> %s", in.readTS, out.value)
	},
}

// keyCall is one operation of the history CheckLinearizable judges, before
// it becomes a porcupine operation: the recorded operation (shared, not
// copied), its call and return times as judged, and a write's expiry (the
// oracle's).
type keyCall struct {
	op        *KeyOp
	call, ret int64
	expireAt  hlc.TS
}

// key is the raw key c operates on.
func (c keyCall) key() string { return c.op.Key }

// write reports whether c is a write (else a latest read).
func (c keyCall) write() bool { return c.op.Write }

// in is c's porcupine input: a write's kind, value and expiry, or a
// read's timestamp.
func (c keyCall) in() mInput {
	if c.op.Write {
		return mInput{write: true, delete: c.op.Delete, op: c.op.Op, expireAt: c.expireAt}
	}
	return mInput{readTS: c.op.ReadTS}
}

// out is c's porcupine output: what a read returned (nothing for a
// write).
func (c keyCall) out() mOutput {
	if c.op.Write {
		return mOutput{}
	}
	return mOutput{found: c.op.Found, value: c.op.Value}
}

// operation is c as a porcupine operation (checked with KeyModel).
func (c keyCall) operation() porcupine.Operation {
	return porcupine.Operation{ClientId: c.op.Client, Call: c.call, Return: c.ret, Input: c.in(), Output: c.out(), Metadata: c.key()}
}

// keyCalls resolves the operations of lists, in order, against the oracle
// into the history CheckLinearizable judges: a write that was never
// applied is dropped, an applied ambiguous write returns at its first
// apply (not before its call), and an operation that never returns is
// dropped. Several lists are judged as their concatenation without it
// being made; the calls point into the lists.
func keyCalls(oracle *VersionOracle, lists ...[]KeyOp) []keyCall {
	n := 0
	for _, ops := range lists {
		n += len(ops)
	}
	hist := make([]keyCall, 0, n)
	for _, ops := range lists {
		for i := range ops {
			o := &ops[i]
			c := keyCall{op: o, call: int64(o.Call), ret: int64(o.Return)}
			if o.Write {
				w, ok := oracle.OpOn(o.Op, o.Key)
				if !ok {
					continue
				}
				c.expireAt = w.ExpireAt
				if o.Ambiguous {
					c.ret = max(int64(w.At), c.call)
				}
			}
			if c.ret == math.MaxInt64 {
				continue
			}
			hist = append(hist, c)
		}
	}
	return hist
}

// Operations is the history CheckLinearizable judges, as porcupine
// operations (checked per key with KeyModel).
func Operations(ops []KeyOp, oracle *VersionOracle) []porcupine.Operation {
	return porcupineOps(keyCalls(oracle, ops))
}

// byKey splits hist into one history per key, keys in sorted order, each
// in hist's order (KeyModel.Partition's split). It reorders hist in place
// (a stable counting sort on the keys' ranks, then the permutation applied
// cycle by cycle) and returns the histories as parts of it: no copy of the
// history is made.
func byKey(hist []keyCall) [][]keyCall {
	number := map[string]int{} // keys numbered as first seen
	var ks []string
	dest := make([]int, len(hist)) // key numbers, then where each call goes
	for i, c := range hist {
		k := c.key()
		n, ok := number[k]
		if !ok {
			n = len(ks)
			number[k] = n
			ks = append(ks, k)
		}
		dest[i] = n
	}
	sorted := slices.Clone(ks)
	slices.Sort(sorted)
	rank := make([]int, len(ks)) // by key number
	for r, k := range sorted {
		rank[number[k]] = r
	}
	bound := make([]int, len(ks)+1) // by rank: where each history starts, once summed
	for _, n := range dest {
		bound[rank[n]+1]++
	}
	for r := 1; r <= len(ks); r++ {
		bound[r] += bound[r-1]
	}
	parts := make([][]keyCall, len(ks))
	for r := range parts {
		parts[r] = hist[bound[r]:bound[r+1]:bound[r+1]]
	}
	for i, n := range dest {
		r := rank[n]
		dest[i] = bound[r]
		bound[r]++
	}
	permute(hist, dest)
	return parts
}

// permute moves hist[i] to hist[dest[i]] for every i (dest a permutation),
// in place, one cycle at a time; dest ends as the identity.
func permute(hist []keyCall, dest []int) {
	for i := range hist {
		for dest[i] != i {
			j := dest[i]
			hist[i], hist[j] = hist[j], hist[i]
			dest[i], dest[j] = dest[j], dest[i]
		}
	}
}

// CheckLinearizable checks M.Linearizable per key. Writes are resolved
// against the oracle: a write that was never applied is dropped (failed
// writes certainly were not; ambiguous ones the oracle proves either way),
// and an applied ambiguous write takes effect by its first apply. Each
// key's history is judged in segments (judgeKey): only the segments that
// do not decide themselves go to porcupine, all of them in one call
// (checkBatched); only when that call does not answer OK are the keys
// judged one by one (checkKeysInOrder), which names the first key (in key
// order) that fails.
func CheckLinearizable(ops []KeyOp, oracle *VersionOracle, timeout time.Duration) (property.Verdict, *property.Violation) {
	return CheckLinearizableSplit(ops, nil, oracle, timeout)
}

// CheckLinearizableSplit is CheckLinearizable of the history recorded
// followed by derived, judged without that history being made (a world's
// recorded operations and those derived from its scans, transactions and
// range deletes need no copy into one list).
func CheckLinearizableSplit(recorded, derived []KeyOp, oracle *VersionOracle, timeout time.Duration) (property.Verdict, *property.Violation) {
	parts := byKey(keyCalls(oracle, recorded, derived))
	start := time.Now() // wall time bounds the checker only; it never feeds the world
	verdict, failing := checkBatched(parts, timeout)
	switch {
	case verdict == property.VerdictOK:
		return property.VerdictOK, nil
	case verdict == property.VerdictViolation && failing >= 0:
		return property.VerdictViolation, noLinearization(parts[failing])
	}
	return checkKeysInOrder(parts, timeout-time.Since(start))
}

// noLinearization is the violation of a key whose history part does not
// linearize.
func noLinearization(part []keyCall) *property.Violation {
	return property.Violated(property.MLinearizable, "the %d operations on %q have no linearization", len(part), part[0].key())
}

// checkBatched judges the keys' histories as checkKeysInOrder does, up to
// the first key a segment judged alone fails, with every segment that
// needs porcupine checked in one porcupine call (one partition each;
// porcupine's set-up, timer and wait per call cost several times what
// most segments' searches do). It returns OK when every key linearizes;
// Violation and the index of the failing key when the only failure is
// that key's segment judged alone and porcupine found every segment
// before it (in key order, and in that key before it) linearizable; else
// Violation or Unknown with index -1, for checkKeysInOrder to settle. The
// segments are cut and judged alone exactly as judgeKey does (judgeKey
// sorts each part in place; checkBatched does the same, so a later
// judgeKey finds it sorted).
func checkBatched(parts [][]keyCall, timeout time.Duration) (property.Verdict, int) {
	var b segmentBatch
	failing := -1
	for i, part := range parts {
		if !b.addKey(part) {
			failing = i
			break
		}
	}
	if verdict := b.check(timeout); verdict != property.VerdictOK {
		return verdict, -1
	}
	if failing >= 0 {
		return property.VerdictViolation, failing
	}
	return property.VerdictOK, -1
}

// checkKeysInOrder judges the keys one by one, in key order, each key's
// undecided segments in porcupine calls of their own, and reports the first
// key that fails (or runs out of time).
func checkKeysInOrder(parts [][]keyCall, timeout time.Duration) (property.Verdict, *property.Violation) {
	spent := time.Duration(0)
	for _, part := range parts {
		if timeout-spent <= 0 {
			return property.VerdictUnknown, property.Violated(property.MLinearizable, "porcupine ran out of time")
		}
		verdict, used, _ := judgeKey(part, timeout-spent)
		spent += used
		switch verdict {
		case property.VerdictViolation:
			return property.VerdictViolation, noLinearization(part)
		case property.VerdictUnknown:
			return property.VerdictUnknown, property.Violated(property.MLinearizable, "porcupine ran out of time")
		}
	}
	return property.VerdictOK, nil
}

// porcupineOps is part as porcupine operations.
func porcupineOps(part []keyCall) []porcupine.Operation {
	ops := make([]porcupine.Operation, len(part))
	for i, c := range part {
		ops[i] = c.operation()
	}
	return ops
}

// judgeKey judges one key's history as porcupine judges it with KeyModel,
// within the wall-time budget left (sorting part by call time in place); it returns the verdict, the wall time
// porcupine took, and how many segments went to porcupine.
//
// Why segments are exact. Sorted by call time, the history is cut before
// an operation that is called strictly after every earlier one returned
// (porcupine orders a call before a return at the same instant, so only a
// strict gap separates), and only where the earlier operations' writes
// have a last one: a write called strictly after every other of them
// returned. Every linearization then orders the operations before the cut
// first, and ends them with that write in force; so the history
// linearizes if and only if the part before the cut does from the state
// the part started in, and the rest does from that write's state. A
// segment of writes only linearizes from any state (KeyModel accepts
// every write); a segment whose operations each return strictly before
// the next is called has one order only, stepped through here; any other
// goes to porcupine, started in the segment's state.
func judgeKey(part []keyCall, left time.Duration) (property.Verdict, time.Duration, int) {
	order := part // sorted in place: part is the caller's to give
	slices.SortStableFunc(order, func(a, b keyCall) int { return cmp.Compare(a.call, b.call) })
	for _, c := range order {
		if c.ret < c.call {
			return checkFrom(mState{}, order, left) // no segments in a history that runs backwards
		}
	}
	state, spent, sent := mState{}, time.Duration(0), 0
	for len(order) > 0 {
		n, next := firstSegment(order, state)
		verdict, ok := judgeAlone(order[:n], state)
		if !ok {
			var used time.Duration
			var checked int
			verdict, used, checked = checkFrom(state, order[:n], left-spent)
			spent += used
			sent += checked
		}
		if verdict != property.VerdictOK {
			return verdict, spent, sent
		}
		state, order = next, order[n:]
	}
	return property.VerdictOK, spent, sent
}

// segmentBatch collects segments that need porcupine, each with the state
// it starts in, as porcupine operations to check in one call (check).
type segmentBatch struct {
	segs   [][]keyCall
	states []mState // states[i] is where segs[i] starts
	n      int      // operations in all segments
}

// addKey sorts part by call (in place, as judgeKey does) and cuts it into
// segments as judgeKey does, adding those that do not decide alone; it
// reports false when one of them decides alone that the key does not
// linearize (the segments after it are not added).
func (b *segmentBatch) addKey(part []keyCall) bool {
	order := part
	slices.SortStableFunc(order, func(a, b keyCall) int { return cmp.Compare(a.call, b.call) })
	for _, c := range order {
		if c.ret < c.call {
			b.add(mState{}, order) // no segments in a history that runs backwards
			return true
		}
	}
	state := mState{}
	for len(order) > 0 {
		n, next := firstSegment(order, state)
		verdict, ok := judgeAlone(order[:n], state)
		switch {
		case !ok:
			b.add(state, order[:n])
		case verdict != property.VerdictOK:
			return false
		}
		state, order = next, order[n:]
	}
	return true
}

// add adds one segment that starts in state.
func (b *segmentBatch) add(state mState, seg []keyCall) {
	b.segs = append(b.segs, seg)
	b.states = append(b.states, state)
	b.n += len(seg)
}

// check runs porcupine once over the collected segments (OK if there are
// none), each its own partition, within timeout, and maps its answer as
// checker.CheckWithin does.
func (b *segmentBatch) check(timeout time.Duration) property.Verdict {
	if len(b.segs) == 0 {
		return property.VerdictOK
	}
	if timeout <= 0 {
		return property.VerdictUnknown // porcupine would take it as no timeout at all
	}
	model, history := b.model()
	return checker.CheckWithin(model, history, timeout)
}

// model is what check (and checkFrom, for one segment) gives porcupine:
// KeyModel's sequential specification (stepKey) and the operations of
// every segment, with a partition per segment. KeyModel's value payloads
// box every input and output, and every state a step returns, on the heap;
// here each operation's input and output point into one array, a read
// returns the state it was given, and a write the state it leaves,
// computed once (a write's state does not depend on the state before).
// States are compared by content, as KeyModel's are, so porcupine's search
// and its answer are the same. Porcupine
// starts every partition in the model's one initial state; here that is a
// marker (nil) that the first step of a partition reads as its segment's
// own start state, which the operation carries (segmentOp.start). Only the
// initial state is nil, so the marker stands for exactly that state.
func (b *segmentBatch) model() (porcupine.Model, []porcupine.Operation) {
	segOps := make([]segmentOp, 0, b.n)
	history := make([]porcupine.Operation, 0, b.n)
	parts := make([][]porcupine.Operation, len(b.segs))
	for s, seg := range b.segs {
		at := len(history)
		for _, c := range seg {
			segOps = append(segOps, segmentOp{in: c.in(), out: c.out(), start: &b.states[s]})
			o := &segOps[len(segOps)-1]
			if o.in.write {
				_, o.after = stepKey(mState{}, o.in, o.out)
			}
			history = append(history, porcupine.Operation{ClientId: c.op.Client, Call: c.call, Return: c.ret, Input: o, Output: o})
		}
		parts[s] = history[at:len(history):len(history)]
	}
	model := porcupine.Model{
		Partition: func([]porcupine.Operation) [][]porcupine.Operation { return parts },
		Init:      func() any { return (*mState)(nil) },
		Step: func(st, input, _ any) (bool, any) {
			op := input.(*segmentOp)
			if op.in.write {
				return true, &op.after
			}
			s := st.(*mState)
			if s == nil {
				s = op.start
			}
			ok, _ := stepKey(*s, op.in, op.out)
			return ok, s
		},
		Equal: func(a, b any) bool {
			x, y := a.(*mState), b.(*mState)
			if x == nil || y == nil {
				return x == y
			}
			return *x == *y
		},
	}
	return model, history
}

// firstSegment returns how many operations of order (sorted by call) form
// its first segment (see judgeKey), and the state after them when they
// start in state.
func firstSegment(order []keyCall, state mState) (int, mState) {
	maxRet := order[0].ret
	lastWrite := -1        // the segment's write called last
	earlierWrites := false // the segment has writes before lastWrite
	var earlierRet int64   // the latest return of those
	for i, c := range order {
		if i > 0 && maxRet < c.call && (!earlierWrites || earlierRet < order[lastWrite].call) {
			return i, stateAfter(order, lastWrite, state)
		}
		maxRet = max(maxRet, c.ret)
		if !c.write() {
			continue
		}
		if lastWrite >= 0 {
			if !earlierWrites || order[lastWrite].ret > earlierRet {
				earlierRet = order[lastWrite].ret
			}
			earlierWrites = true
		}
		lastWrite = i
	}
	return len(order), stateAfter(order, lastWrite, state)
}

// stateAfter is the state a segment leaves: that of its last write, if it
// has one, else the state it started in.
func stateAfter(order []keyCall, lastWrite int, state mState) mState {
	if lastWrite < 0 {
		return state
	}
	_, next := stepKey(state, order[lastWrite].in(), order[lastWrite].out())
	return next
}

// judgeAlone judges one segment, started in state, without porcupine when
// that is exact, and reports whether it did: a segment of writes only
// linearizes; a segment in which every operation returns strictly before
// the next one is called linearizes if and only if KeyModel accepts that
// order. Anything else (overlapping operations with a read among them) it
// leaves undecided.
func judgeAlone(seg []keyCall, state mState) (property.Verdict, bool) {
	reads := false
	for _, c := range seg {
		reads = reads || !c.write()
	}
	if !reads {
		return property.VerdictOK, true
	}
	for i := 1; i < len(seg); i++ {
		if seg[i-1].ret >= seg[i].call {
			return property.VerdictUnknown, false
		}
	}
	for _, c := range seg {
		ok, next := stepKey(state, c.in(), c.out())
		if !ok {
			return property.VerdictViolation, true
		}
		state = next
	}
	return property.VerdictOK, true
}

// checkFrom runs porcupine on ops with KeyModel started in state, within
// the budget left, and returns its verdict, the wall time it took and 1
// (the segments it sent to porcupine). With no budget left it sends none
// and answers Unknown: porcupine takes a timeout of zero or less as no
// timeout at all, and a key's later segments get what its earlier ones
// left.
func checkFrom(state mState, ops []keyCall, left time.Duration) (property.Verdict, time.Duration, int) {
	if left <= 0 {
		return property.VerdictUnknown, 0, 0
	}
	var b segmentBatch // one segment: the batch's model, one partition
	b.add(state, ops)
	model, history := b.model()
	start := time.Now() // wall time bounds the checker only; it never feeds the world
	verdict := checker.CheckWithin(model, history, left)
	return verdict, time.Since(start), 1
}

// segmentOp is one operation of a segment as segmentBatch.model hands it
// to porcupine: its payloads, and the state it leaves if it is a write.
type segmentOp struct {
	in    mInput
	out   mOutput
	after mState
	start *mState // the state its segment starts in
}

// AppendScanReads appends to dst the reads a complete scan at the latest
// timestamp amounts to for M.Linearizable: one per key the oracle knows of
// the scanned family whose route key lies in the span (found or not), all
// with the scan's call and return times. A scan cut short by its limit
// says nothing of the keys it did not reach and gives none.
func (o *VersionOracle) AppendScanReads(dst []KeyOp, s ScanObs, client int, call, ret simclock.Time) []KeyOp {
	if scanCutShort(s) {
		return dst
	}
	rows := newRowFinder(s.Rows)
	fam := s.Family.Prefix()
	for _, ki := range o.keyInfos() {
		if !ki.inFamilySpan(fam, s.Span.Start, s.Span.End) {
			continue
		}
		v, found := rows.find(ki.key)
		dst = append(dst, KeyOp{Client: client, Key: ki.key, Call: call, Return: ret, ReadTS: s.TS, Found: found, Value: v})
	}
	return dst
}

// ScanReadCount returns how many reads AppendScanReads appends for s.
func (o *VersionOracle) ScanReadCount(s ScanObs) int {
	if scanCutShort(s) {
		return 0
	}
	n, fam := 0, s.Family.Prefix()
	for _, ki := range o.keyInfos() {
		if ki.inFamilySpan(fam, s.Span.Start, s.Span.End) {
			n++
		}
	}
	return n
}

// scanCutShort reports whether s stopped at its limit.
func scanCutShort(s ScanObs) bool { return s.Limit > 0 && len(s.Rows) >= s.Limit }

// rowFinder answers which value a scan returned for a key (the last of
// its rows with that key, as a map filled row by row would). Rows come in
// strictly ascending key order from a correct store, and keys are asked in
// ascending order, so it walks the rows once; rows in any other order (a
// broken store) are put in a map instead.
type rowFinder struct {
	rows  []mvcc.ScanRow
	next  int               // sorted rows: the first row not yet passed
	byKey map[string]string // unsorted rows
}

// newRowFinder returns a finder over rows.
func newRowFinder(rows []mvcc.ScanRow) rowFinder {
	for i := 1; i < len(rows); i++ {
		if rows[i-1].Key >= rows[i].Key {
			byKey := make(map[string]string, len(rows))
			for _, r := range rows {
				byKey[r.Key] = r.Value
			}
			return rowFinder{byKey: byKey}
		}
	}
	return rowFinder{rows: rows}
}

// find returns the value the scan returned for key, if it returned one.
// With sorted rows, keys must be asked in ascending order.
func (f *rowFinder) find(key string) (string, bool) {
	if f.byKey != nil {
		v, ok := f.byKey[key]
		return v, ok
	}
	for f.next < len(f.rows) && f.rows[f.next].Key < key {
		f.next++
	}
	if f.next < len(f.rows) && f.rows[f.next].Key == key {
		return f.rows[f.next].Value, true
	}
	return "", false
}
