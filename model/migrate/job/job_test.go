package job

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestPhaseMachine(t *testing.T) {
	ok := [][2]Phase{
		{Planned, Backfill}, {Backfill, Fence}, {Fence, DeltaCopy}, {DeltaCopy, Cutover},
		{Cutover, Cleanup}, {Cleanup, Done}, {Backfill, Failed}, {Cleanup, Failed},
		{Planned, Abandoning}, {DeltaCopy, Abandoning}, {Abandoning, Abandoned},
	}
	for _, e := range ok {
		if !Allowed(e[0], e[1], 0) {
			t.Errorf("%s -> %s refused", e[0], e[1])
		}
	}
	bad := [][2]Phase{
		{Planned, Fence}, {Backfill, Cutover}, {Cutover, Abandoning}, {Cleanup, Abandoning},
		{Done, Failed}, {Abandoned, Planned}, {Abandoning, Failed}, {Done, Cleanup},
	}
	for _, e := range bad {
		if Allowed(e[0], e[1], 0) {
			t.Errorf("%s -> %s allowed", e[0], e[1])
		}
	}
	if !Allowed(Failed, DeltaCopy, DeltaCopy) || Allowed(Failed, Cutover, DeltaCopy) {
		t.Error("FAILED returns only to its retry phase")
	}
	if !Allowed(Failed, Abandoning, Fence) || Allowed(Failed, Abandoning, Cutover) {
		t.Error("abandon from FAILED only before CUTOVER")
	}
}

func TestRecordChecksAndCodec(t *testing.T) {
	j := SplitJob{ID: 4, SourceGroup: 1, TargetGroup: 2, SplitKey: "k5", Phase: Backfill, CreatedAtMs: 9,
		TrackerArmed: true, MinReadTS: 77, FenceVersion: 3, DeltaFloor: 41, ReadFence: FenceArming, ExpectedCutover: 5, CutoverFloor: 99, Disarmed: true}
	j.ResetBrackets(1)
	j.Brackets[0].Cursor = []byte{1, 2}
	if err := j.Check(); err != nil {
		t.Fatal(err)
	}
	got, err := Decode(j.Encode())
	if err != nil || !cmp.Equal(j, got) {
		t.Fatalf("round trip: %v %s", err, cmp.Diff(j, got))
	}
	c := j.Clone()
	c.Brackets[0].Cursor[0] = 9
	if j.Brackets[0].Cursor[0] != 1 {
		t.Fatal("Clone shares cursors")
	}
	j.Phase = Failed
	if j.Check() == nil {
		t.Fatal("FAILED without retry_phase passed Check")
	}
	j.RetryPhase = Backfill
	if j.Check() != nil || j.AllBracketsDone() {
		t.Fatal("FAILED with retry_phase / brackets")
	}
	for i := range j.Brackets {
		j.Brackets[i].Done = true
	}
	if !j.AllBracketsDone() {
		t.Fatal("AllBracketsDone")
	}
}

func TestHistoryBound(t *testing.T) {
	b := HistoryBound{MaxEntries: 3, MaxAge: time.Minute}
	var es []HistEntry
	for i, ms := range []int64{1_000, 50_000, 70_000, 80_000} {
		k := HistKey(ms, uint64(i+1))
		if got, ok := ParseHistKey(k); !ok || got != ms {
			t.Fatalf("ParseHistKey(%q) = %d %v", k, got, ok)
		}
		es = append(es, HistEntry{Key: k, TerminalMs: ms})
	}
	// now 100s: the 1s entry is too old; keeping 3 with the new one means
	// one more of the oldest goes.
	got := b.Evict(es, 100_000)
	want := []string{HistKey(1_000, 1), HistKey(50_000, 2)}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatal(d)
	}
	if len(b.Evict(es[:1], 2_000)) != 0 {
		t.Fatal("evicted within bounds")
	}
	if DecodeID(EncodeID(77)) != 77 || DecodeID(nil) != 0 {
		t.Fatal("ids")
	}
}

// A clone's cursors share one buffer: each must equal the original's, and
// changing or appending to one must leave the others (and the original)
// alone.
func TestCloneCursorsStayApart(t *testing.T) {
	j := SplitJob{ID: 4, SourceGroup: 1, TargetGroup: 2}
	j.ResetBrackets(1)
	for i := range j.Brackets {
		if i%3 != 1 {
			j.Brackets[i].Cursor = []byte{byte(i), byte(i + 1), byte(i + 2)}[:1+i%3]
		}
	}
	orig := SplitJob{Brackets: append([]Bracket(nil), j.Brackets...)}
	c := j.Clone()
	if !cmp.Equal(j, c, cmpopts.EquateEmpty()) {
		t.Fatalf("clone differs: %s", cmp.Diff(j, c, cmpopts.EquateEmpty()))
	}
	for i := range c.Brackets {
		c.Brackets[i].Cursor = append(c.Brackets[i].Cursor, 0xee, 0xff)
		if len(c.Brackets[i].Cursor) > 0 {
			c.Brackets[i].Cursor[0] = 0xdd
		}
	}
	for i := range c.Brackets {
		want := append(append([]byte(nil), orig.Brackets[i].Cursor...), 0xee, 0xff)
		want[0] = 0xdd
		if !bytes.Equal(c.Brackets[i].Cursor, want) {
			t.Fatalf("bracket %d cursor %x, want %x", i, c.Brackets[i].Cursor, want)
		}
		if !bytes.Equal(j.Brackets[i].Cursor, orig.Brackets[i].Cursor) {
			t.Fatalf("bracket %d: the original's cursor changed to %x", i, j.Brackets[i].Cursor)
		}
	}
}

// Decode reads the cursors in place and then copies them out: the decoded
// job must not share the record's bytes, and its cursors must stay apart.
func TestDecodedCursorsOwnTheirBytes(t *testing.T) {
	j := SplitJob{ID: 4, SourceGroup: 1, TargetGroup: 2, Phase: Backfill}
	j.ResetBrackets(1)
	for i := range j.Brackets {
		if i%2 == 0 {
			j.Brackets[i].Cursor = []byte{byte(i), 0xaa, byte(i)}
		}
	}
	b := j.Encode()
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = 0x55 // the record's buffer is reused for something else
	}
	for i := range got.Brackets {
		got.Brackets[i].Cursor = append(got.Brackets[i].Cursor, 0xff)
	}
	for i, br := range got.Brackets {
		want := append(append([]byte(nil), j.Brackets[i].Cursor...), 0xff)
		if !bytes.Equal(br.Cursor, want) {
			t.Fatalf("bracket %d cursor %x, want %x", i, br.Cursor, want)
		}
	}
}

// Key spells the id as %016x after the prefix.
func TestKeyLayout(t *testing.T) {
	for _, id := range []uint64{0, 1, 0xabc, 1<<32 + 7, 1<<64 - 1} {
		if got, want := Key(id), fmt.Sprintf("%s%016x", jobPrefix, id); got != want {
			t.Fatalf("Key(%d) = %q, want %q", id, got, want)
		}
	}
}

// HistKey spells the end time and the id as %016x after the prefix, as it
// did when fmt built it (stored history keys must keep their names).
func TestHistKeyLayout(t *testing.T) {
	for _, ms := range []int64{0, 1, 86_400_000, -1, 1<<63 - 1} {
		for _, id := range []uint64{0, 7, 0xabc, 1<<64 - 1} {
			want := fmt.Sprintf("%s%016x|%016x", histPrefix, uint64(ms), id)
			if got := HistKey(ms, id); got != want {
				t.Fatalf("HistKey(%d, %d) = %q, want %q", ms, id, got, want)
			}
		}
	}
}
