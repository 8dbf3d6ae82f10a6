package simclock

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/zeebo/blake3"
)

// TestTraceBatchesAgreeWithHashingEveryRecord writes random traces (records
// of a few bytes to more than a hash batch, tails of one to hundreds of
// records) and checks, after every record and while one is open, that
// Digest is blake3 of every finished record's encoding hashed as it ended,
// and Tail the last finished records; reads in mid-run change nothing
// later. The JSON lines written as the records end are every record, in
// order, with its typed fields. It fails if a batch is hashed twice or not
// at all, if compaction drops a kept record or shifts an offset, if Tail
// shows the open one, or if a JSON line is read from another record's
// place in the buffer.
func TestTraceBatchesAgreeWithHashingEveryRecord(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		c := NewSeeded(seed)
		tailCap := []int{1, 2, 40, 300}[c.Intn(4)]
		tr := NewTrace(tailCap)
		var lines bytes.Buffer
		tr.WriteJSON(&lines)
		ref := blake3.New()
		var want []Record
		var wantFields []json.RawMessage
		n := 50 + c.Intn(600)
		for i := 1; i <= n; i++ {
			size := c.Intn(300)
			if c.Chance(0.05) {
				size = c.Intn(2 * hashBatch)
			}
			at, kind, actor := Time(c.Intn(1e9)), []string{"k", "kv.apply", ""}[c.Intn(3)], strings.Repeat("a", c.Intn(3))
			d := tr.Rec(at, kind, actor).Uint("i", uint64(i)).Str("pad", strings.Repeat("x", size))
			if c.Chance(0.1) {
				checkTraceReads(t, seed, i, tr, ref, want, tailCap) // while a record is open
			}
			d.End()
			enc := binary.AppendUvarint(nil, uint64(i))
			enc = binary.AppendVarint(enc, int64(at))
			enc = append(append(enc, byte(len(kind))), kind...)
			enc = append(append(enc, byte(len(actor))), actor...)
			detail := NewDetail().Uint("i", uint64(i)).Str("pad", strings.Repeat("x", size)).Binary()
			ref.Write(append(append(enc, detail...), tagEnd))
			want = append(want, Record{Seq: uint64(i), At: at, Kind: kind, Actor: actor, Detail: RenderDetail(detail)})
			wantFields = append(wantFields, DetailJSON(detail))
			if c.Chance(0.2) || i == n {
				checkTraceReads(t, seed, i, tr, ref, want, tailCap)
			}
		}
		checkJSONLines(t, seed, &lines, want, wantFields)
	}
}

// checkJSONLines compares the JSON lines a trace wrote with the records
// and typed fields it should have written, one line per record.
func checkJSONLines(t *testing.T, seed uint64, lines *bytes.Buffer, want []Record, wantFields []json.RawMessage) {
	t.Helper()
	sc := bufio.NewScanner(lines)
	sc.Buffer(nil, 1<<20)
	i := 0
	for ; sc.Scan(); i++ {
		var got recordLine
		if err := json.Unmarshal(sc.Bytes(), &got); err != nil {
			t.Fatalf("seed %d JSON line %d: %v", seed, i+1, err)
		}
		if i >= len(want) || got.Record != want[i] || !bytes.Equal(got.Fields, wantFields[i]) {
			t.Fatalf("seed %d JSON line %d: record seq %d kind %q, %d bytes of detail; not record %d of %d, or other fields", seed, i+1, got.Seq, got.Kind, len(got.Detail), i+1, len(want))
		}
	}
	if err := sc.Err(); err != nil || i != len(want) {
		t.Fatalf("seed %d: %d JSON lines (%v), want %d", seed, i, err, len(want))
	}
}

// checkTraceReads compares tr's digest and tail with the reference's.
func checkTraceReads(t *testing.T, seed uint64, i int, tr *Trace, ref *blake3.Hasher, want []Record, tailCap int) {
	t.Helper()
	if got, want := tr.Digest(), hex.EncodeToString(ref.Sum(nil)); got != want {
		t.Fatalf("seed %d record %d: digest %s, hashing every record %s", seed, i, got, want)
	}
	wantTail := want[max(0, len(want)-tailCap):]
	if tr.open && len(want) >= tailCap {
		wantTail = wantTail[1:] // the open record has taken the oldest's slot
	}
	if got := tr.Tail(); !slices.Equal(got, wantTail) {
		t.Fatalf("seed %d record %d: tail of %d records, want %d (first %+v, want %+v)", seed, i, len(got), len(wantTail), got[:min(1, len(got))], wantTail[:min(1, len(wantTail))])
	}
}

// TestTraceBufferStaysBounded writes long traces and checks, after every
// record, the bound Trace's doc states: the record buffer holds fewer than
// twice the bytes of the last tailCap records (as they were at the last
// batch, at most the largest such window so far), plus a batch and a
// record. It fails if compact never drops hashed records, or drops them
// only once the buffer is mostly old records, so that a long run keeps
// its whole trace in memory.
func TestTraceBufferStaysBounded(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		c := NewSeeded(seed)
		tailCap := []int{1, 40, 300}[seed%3]
		tr := NewTrace(tailCap)
		var sizes []int // the encoded size of every record so far
		window, maxWindow, maxRecord := 0, 0, 0
		for i := 1; i <= 30000; i++ {
			size := c.Intn(200)
			if c.Chance(0.01) {
				size = c.Intn(hashBatch / 2)
			}
			tr.Rec(Time(i), "k", "a").Str("pad", strings.Repeat("x", size)).End()
			enc := len(tr.buf) - tr.newest() // the record just ended
			sizes = append(sizes, enc)
			window += enc
			if len(sizes) > tailCap {
				window -= sizes[len(sizes)-1-tailCap]
			}
			maxWindow, maxRecord = max(maxWindow, window), max(maxRecord, enc)
			if bound := 2*maxWindow + hashBatch + maxRecord; len(tr.buf) > bound {
				t.Fatalf("seed %d tail %d record %d: the buffer holds %d bytes, over the bound %d", seed, tailCap, i, len(tr.buf), bound)
			}
		}
	}
}
