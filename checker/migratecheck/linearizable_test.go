package migratecheck

import (
	"cmp"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"shardsim/checker"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
	"shardsim/property"
	"shardsim/simclock"
)

// randomKeyHistory is one key's history of n operations by up to three
// clients over a few values: writes (some deletes, some with a TTL) and
// latest reads that see one of the values or nothing at a random
// timestamp. Operations start after the previous one's call, most of them
// after it returned (sometimes at that very instant), some while it runs,
// so a good share of histories are sequential and a good share are not.
func randomKeyHistory(r *rand.Rand, n int) []keyCall {
	values := []string{"a", "b", "c"}
	var part []keyCall
	var call, ret int64
	for i := 0; i < n; i++ {
		switch r.Intn(8) {
		case 0:
			call += int64(r.Intn(3)) // overlaps the previous operation
		case 1:
			call = ret // meets it at an instant
		default:
			call = ret + 1 + int64(r.Intn(3))
		}
		ret = call + int64(r.Intn(4))
		c := keyCall{op: &KeyOp{Client: r.Intn(3), Key: "k"}, call: call, ret: ret}
		if r.Intn(2) == 0 {
			c.op.Write, c.op.Delete, c.op.Op = true, r.Intn(5) == 0, values[r.Intn(len(values))]
			if r.Intn(4) == 0 {
				c.expireAt = hlc.TS(1 + r.Intn(20))
			}
		} else {
			c.op.ReadTS = hlc.TS(r.Intn(25))
			if r.Intn(4) > 0 {
				c.op.Found, c.op.Value = true, values[r.Intn(len(values))]
			}
		}
		part = append(part, c)
	}
	return part
}

// judgeKey agrees with porcupine run on the whole history, over many
// random histories: those it decides alone, those it cuts into segments
// some of which porcupine judges from a state other than the initial one,
// and those porcupine judges whole; and each kind comes out both ways
// often. The segments are exactly as strong as the porcupine check they
// replace.
func TestJudgeKeyAgreesWithPorcupine(t *testing.T) {
	single := KeyModel
	single.Partition = nil
	r := rand.New(rand.NewSource(1))
	type kind struct {
		alone, fromState bool
		verdict          property.Verdict
	}
	seen := map[kind]int{}
	for i := 0; i < 20000; i++ {
		part := randomKeyHistory(r, 1+r.Intn(12))
		got, _, sent := judgeKey(part, time.Minute)
		want := checker.CheckWithin(single, porcupineOps(part), time.Minute)
		if got != want {
			t.Fatalf("history %+v: judged %s, porcupine %s", part, got, want)
		}
		seen[kind{alone: sent == 0, fromState: laterSegmentToPorcupine(part), verdict: got}]++
	}
	t.Logf("judged %v", seen)
	for _, k := range []kind{{true, false, property.VerdictOK}, {true, false, property.VerdictViolation},
		{false, false, property.VerdictOK}, {false, false, property.VerdictViolation},
		{false, true, property.VerdictOK}, {false, true, property.VerdictViolation}} {
		if seen[k] < 200 {
			t.Fatalf("too few histories of kind %+v: %v", k, seen)
		}
	}
}

// laterSegmentToPorcupine reports whether a segment after the first of
// part goes to porcupine (which then starts in a state of its own).
func laterSegmentToPorcupine(part []keyCall) bool {
	order := slices.Clone(part)
	slices.SortStableFunc(order, func(a, b keyCall) int { return cmp.Compare(a.call, b.call) })
	state := mState{}
	for first := true; len(order) > 0; first = false {
		n, next := firstSegment(order, state)
		if _, ok := judgeAlone(order[:n], state); !ok && !first {
			return true
		}
		state, order = next, order[n:]
	}
	return false
}

// keysOracle knows writes a, b and c on each of k1..k3 (one version each,
// first applied at 2, 5 and 9; b expires at timestamp 15) and nothing of
// any other write.
func keysOracle() *VersionOracle {
	o := NewVersionOracle()
	for i, k := range []string{"k1", "k2", "k3"} {
		o.Add(AppliedWrite{Op: "a", Key: k, Version: mvcc.Version{TS: hlc.TS(10 + i), Value: "a"}, At: 2})
		o.Add(AppliedWrite{Op: "b", Key: k, Version: mvcc.Version{TS: hlc.TS(20 + i), Value: "b", ExpireAt: 15}, At: 5})
		o.Add(AppliedWrite{Op: "c", Key: k, Version: mvcc.Version{TS: hlc.TS(30 + i), Value: "c"}, At: 9})
	}
	return o
}

// randomKeyOps is a random history over keys k1..k3 as the recorder
// gives it: writes of a, b, c or a never-applied ghost, some ambiguous,
// and reads, with times from randomKeyHistory.
func randomKeyOps(r *rand.Rand) []KeyOp { return randomKeyOpsOf(r, 5, 2) }

// randomKeyOpsOf is randomKeyOps with up to most operations per key and
// one read in oneIn (at least 2) seeing a random value, the others what
// the last write left.
func randomKeyOpsOf(r *rand.Rand, most, oneIn int) []KeyOp {
	var ops []KeyOp
	for _, k := range []string{"k1", "k2", "k3"} {
		var last KeyOp
		for _, c := range randomKeyHistory(r, 1+r.Intn(most)) {
			op := KeyOp{Client: c.op.Client, Key: k, Call: simclock.Time(c.call), Return: simclock.Time(c.ret)}
			switch {
			case c.write():
				op.Write, op.Delete, op.Op = true, c.op.Delete, c.op.Op
				if r.Intn(8) == 0 {
					op.Op = "ghost"
				}
				op.Ambiguous = r.Intn(4) == 0
				last = op
			case r.Intn(oneIn) != oneIn-1:
				// Mostly right: what the last write generated left.
				op.ReadTS, op.Found, op.Value = c.op.ReadTS, last.Write && !last.Delete, last.Op
			default:
				op.ReadTS, op.Found, op.Value = c.op.ReadTS, c.op.Found, c.op.Value
			}
			ops = append(ops, op)
		}
	}
	r.Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i] })
	return ops
}

// CheckLinearizable judges a whole multi-key history as porcupine does
// with KeyModel's partition, verdict for verdict, whichever keys it
// decides alone, and names the first key (in key order) that fails.
func TestCheckLinearizableAgreesWithPorcupine(t *testing.T) {
	o := keysOracle()
	r := rand.New(rand.NewSource(2))
	single := KeyModel
	single.Partition = nil
	verdicts := map[property.Verdict]int{}
	for i := 0; i < 5000; i++ {
		ops := randomKeyOps(r)
		assertByKeyIsPartition(t, keyCalls(o, ops), Operations(ops, o))
		got, v := CheckLinearizable(ops, o, time.Minute)
		want, wantKey := property.VerdictOK, ""
		for _, part := range KeyModel.Partition(Operations(ops, o)) {
			if checker.CheckWithin(single, part, time.Minute) == property.VerdictViolation {
				want, wantKey = property.VerdictViolation, part[0].Metadata.(string)
				break
			}
		}
		if got != want || want == property.VerdictViolation && !strings.Contains(v.Detail, strconv.Quote(wantKey)) {
			t.Fatalf("history %+v: CheckLinearizable %s %v, porcupine %s on %s", ops, got, v, want, wantKey)
		}
		verdicts[got]++
	}
	t.Logf("verdicts %v", verdicts)
	if verdicts[property.VerdictOK] < 500 || verdicts[property.VerdictViolation] < 500 {
		t.Fatalf("too little of each verdict: %v", verdicts)
	}
}

// CheckLinearizable, which sends every undecided segment of every key to
// one porcupine call (checkBatched), answers exactly as the keys judged one
// by one in key order (checkKeysInOrder), verdict and message, over many
// random multi-key histories: those whose batch holds several segments
// (some starting in a state other than the initial one) and passes, those
// the batch fails, and those a segment judged alone fails.
func TestCheckLinearizableBatchedAgreesInOrder(t *testing.T) {
	o := keysOracle()
	r := rand.New(rand.NewSource(5))
	var batchedOK, batchFailed, aloneFailed int
	for i := 0; i < 5000; i++ {
		ops := randomKeyOps(r)
		if i%2 == 0 { // longer histories whose reads are mostly right: more linearize
			ops = randomKeyOpsOf(r, 12, 12)
		}
		got, gv := CheckLinearizable(ops, o, time.Minute)
		parts := byKey(keyCalls(o, ops))
		want, wv := checkKeysInOrder(parts, time.Minute)
		if got != want || (gv == nil) != (wv == nil) || gv != nil && *gv != *wv {
			t.Fatalf("history %+v: batched %s %v, in order %s %v", ops, got, gv, want, wv)
		}
		var b segmentBatch
		alone := false
		for _, part := range parts {
			if !b.addKey(part) {
				alone = true
				break
			}
		}
		switch verdict := b.check(time.Minute); {
		case verdict != property.VerdictOK:
			// CheckLinearizable fell back to the in-order check, so the
			// comparison above is of that check with itself: a batch
			// that fails must at least be on a history that fails.
			if want == property.VerdictOK {
				t.Fatalf("history %+v: the batch answered %s, but every key linearizes in order", ops, verdict)
			}
			batchFailed++
		case alone:
			aloneFailed++
		case len(b.segs) > 1 && slices.ContainsFunc(b.states, func(s mState) bool { return s != mState{} }):
			batchedOK++
		}
	}
	t.Logf("%d passed batches of several segments, %d failed batches, %d failed alone", batchedOK, batchFailed, aloneFailed)
	if batchedOK < 100 || batchFailed < 100 || aloneFailed < 100 {
		t.Fatal("the histories did not exercise every path")
	}
}

// An overlapping history with reads goes to porcupine, which finds the
// stale read after both writes completed; with the read overlapping the
// second write, either order explains it.
func TestMigrateLinearizableOverlapping(t *testing.T) {
	o := oracle()
	w := func(op string, call, ret int) KeyOp {
		return KeyOp{Client: 0, Key: "k7", Write: true, Op: op, Call: simclock.Time(call), Return: simclock.Time(ret)}
	}
	read := func(v string, call, ret int) KeyOp {
		return KeyOp{Client: 1, Key: "k7", Found: true, Value: v, Call: simclock.Time(call), Return: simclock.Time(ret), ReadTS: 25}
	}
	overlapping := []KeyOp{w("w1", 0, 3), w("w2", 2, 6), read("w1", 5, 8)}
	if _, _, sent := judgeKey(byKey(keyCalls(o, overlapping))[0], time.Minute); sent == 0 {
		t.Fatal("an overlapping history with a read was decided without porcupine")
	}
	if v, d := CheckLinearizable(overlapping, o, 5*time.Second); v != property.VerdictOK {
		t.Fatalf("read overlapping the second write: %s %s", v, d)
	}
	// A segment that gets no budget (its key's earlier segments used it
	// up) is undecided: porcupine would take a zero timeout as none.
	if v, _, sent := judgeKey(byKey(keyCalls(o, overlapping))[0], 0); v != property.VerdictUnknown || sent != 0 {
		t.Fatalf("a segment with no budget left: %s after %d porcupine checks, want unknown after none", v, sent)
	}
	stale := []KeyOp{w("w1", 0, 3), w("w2", 2, 6), read("w1", 7, 8), read("w2", 5, 9)}
	if v, _ := CheckLinearizable(stale, o, 5*time.Second); v != property.VerdictViolation {
		t.Fatalf("stale read after both writes: %s, want a violation", v)
	}
}

// assertByKeyIsPartition checks that byKey splits calls as KeyModel's
// partition splits their porcupine operations: the same histories, in the
// same order, operation for operation.
func assertByKeyIsPartition(t *testing.T, calls []keyCall, ops []porcupine.Operation) {
	t.Helper()
	got, want := byKey(calls), KeyModel.Partition(ops)
	if len(got) != len(want) {
		t.Fatalf("byKey: %d histories, partition %d", len(got), len(want))
	}
	for i := range got {
		if !reflect.DeepEqual(porcupineOps(got[i]), want[i]) {
			t.Fatalf("history %d: byKey %+v, partition %+v", i, porcupineOps(got[i]), want[i])
		}
	}
}

// scanReadsByMap is what AppendScanReads appended before it walked sorted
// rows: the reads of a complete scan, each key's value looked up in a map
// filled row by row (the last row of a key wins).
func scanReadsByMap(o *VersionOracle, s ScanObs, client int, call, ret simclock.Time) []KeyOp {
	if s.Limit > 0 && len(s.Rows) >= s.Limit {
		return nil
	}
	found := map[string]string{}
	for _, row := range s.Rows {
		found[row.Key] = row.Value
	}
	var out []KeyOp
	for _, ki := range o.keyInfos() {
		if !ki.inFamilySpan(s.Family.Prefix(), s.Span.Start, s.Span.End) {
			continue
		}
		v, ok := found[ki.key]
		out = append(out, KeyOp{Client: client, Key: ki.key, Call: call, Return: ret, ReadTS: s.TS, Found: ok, Value: v})
	}
	return out
}

// AppendScanReads (with ScanReadCount) gives exactly the reads of the map
// lookup it replaced, on random scans: rows sorted as a store returns
// them, and rows out of order or repeated (a broken store), limits hit or
// not, spans over part of the keys.
func TestAppendScanReadsAgreesWithMap(t *testing.T) {
	o := NewVersionOracle()
	ks := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	for i, k := range ks {
		o.Add(AppliedWrite{Op: "w" + k, Key: k, Version: mvcc.Version{TS: hlc.TS(10 + i), Value: k}})
	}
	r := rand.New(rand.NewSource(3))
	unsorted := 0
	for i := 0; i < 5000; i++ {
		var rows []mvcc.ScanRow
		for _, k := range ks {
			if r.Intn(2) == 0 {
				rows = append(rows, mvcc.ScanRow{Key: k, Version: mvcc.Version{Value: fmt.Sprint(r.Intn(3))}})
			}
		}
		if r.Intn(3) == 0 && len(rows) > 0 {
			rows = append(rows, mvcc.ScanRow{Key: ks[r.Intn(len(ks))], Version: mvcc.Version{Value: "again"}})
			r.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		}
		if !slices.IsSortedFunc(rows, func(a, b mvcc.ScanRow) int { return strings.Compare(a.Key, b.Key) }) {
			unsorted++
		}
		start, end := ks[r.Intn(4)], ks[4+r.Intn(4)]
		s := ScanObs{Op: "s", Span: keys.Span{Start: start, End: end}, TS: 50, Limit: r.Intn(6), Rows: rows}
		prefix := []KeyOp{{Key: "before"}}
		got := o.AppendScanReads(slices.Clone(prefix), s, 1, 2, 3)
		want := append(prefix, scanReadsByMap(o, s, 1, 2, 3)...)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("scan %+v: appended %+v, want %+v", s, got, want)
		}
		if n := o.ScanReadCount(s); n != len(want)-1 {
			t.Fatalf("scan %+v: counted %d reads, appended %d", s, n, len(want)-1)
		}
	}
	if unsorted < 500 {
		t.Fatalf("only %d of 5000 scans had rows out of order", unsorted)
	}
}

// CheckLinearizableSplit answers exactly what CheckLinearizable answers on
// the two lists joined, verdict and message, whatever the split: random
// multi-key histories cut at random points (either part may be empty).
func TestCheckLinearizableSplitAgrees(t *testing.T) {
	o := keysOracle()
	r := rand.New(rand.NewSource(8))
	verdicts := map[property.Verdict]int{}
	for i := 0; i < 3000; i++ {
		ops := randomKeyOps(r)
		if i%2 == 0 { // longer histories whose reads are mostly right: more linearize
			ops = randomKeyOpsOf(r, 12, 12)
		}
		cut := r.Intn(len(ops) + 1)
		got, gv := CheckLinearizableSplit(slices.Clone(ops[:cut]), slices.Clone(ops[cut:]), o, time.Minute)
		want, wv := CheckLinearizable(ops, o, time.Minute)
		if got != want || (gv == nil) != (wv == nil) || gv != nil && *gv != *wv {
			t.Fatalf("history %+v cut at %d: split %s %v, joined %s %v", ops, cut, got, gv, want, wv)
		}
		verdicts[got]++
	}
	t.Logf("verdicts %v", verdicts)
	if verdicts[property.VerdictOK] < 300 || verdicts[property.VerdictViolation] < 300 {
		t.Fatalf("too little of each verdict: %v", verdicts)
	}
}
