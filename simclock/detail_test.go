package simclock

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zeebo/blake3"
)

func TestDetailRendersEveryKindOfField(t *testing.T) {
	d := NewDetail().
		Uint("call", 7).
		Hex("shard", 0xbe0e).
		Int("rev", -3).
		Dur("in", 1500*time.Microsecond).
		Open("put").Bytes("", []byte("/a/b")).Bytes("", []byte{0, 0xff, 'x'}).Flag("prev").Close().
		Str("err", "etcdserver: leader changed").
		Str("fate", "lost-request").
		Err("none", nil).
		FlagIf("off", false).
		Open("empty").Close().
		Bytes("q", []byte(`a"b`)).
		Text("free -> text")
	want := `call=7 shard=be0e rev=-3 in=1.5ms put("/a/b" 0x00ff78 prev) err="etcdserver: leader changed" fate=lost-request empty() q=0x612262 free -> text`
	if got := d.String(); got != want {
		t.Fatalf("rendered\n%s\nwant\n%s", got, want)
	}
}

func TestDetailBinaryIsUnambiguous(t *testing.T) {
	// Field boundaries and types are part of the encoding.
	pairs := [][2]*Detail{
		{NewDetail().Str("a", "bc"), NewDetail().Str("ab", "c")},
		{NewDetail().Uint("n", 1), NewDetail().Int("n", 1)},
		{NewDetail().Uint("n", 1), NewDetail().Hex("n", 1)},
		{NewDetail().Bytes("", []byte("x")), NewDetail().Str("", "x")},
		{NewDetail().Open("g").Flag("f").Close().Flag("h"), NewDetail().Open("g").Flag("f").Flag("h").Close()},
	}
	for _, p := range pairs {
		if bytes.Equal(p[0].Binary(), p[1].Binary()) {
			t.Fatalf("%s and %s encode alike", p[0], p[1])
		}
	}
}

// TextBytes and StrBytes write the very tokens Text and Str write (a call
// site may switch between them without changing a digest), and building a
// record from a stack buffer allocates nothing.
func TestTextBytesAndStrBytesEncodeLikeTextAndStr(t *testing.T) {
	long := strings.Repeat("x", 300) // a length of two uvarint bytes
	for _, s := range []string{"", "g1", "node=3 term=7", "a \"quoted\"\x00 word", long} {
		if a, b := NewDetail().Text(s).Binary(), NewDetail().TextBytes([]byte(s)).Binary(); !bytes.Equal(a, b) {
			t.Fatalf("Text(%q) = %x, TextBytes = %x", s, a, b)
		}
		if a, b := NewDetail().Str("ts", s).Binary(), NewDetail().StrBytes("ts", []byte(s)).Binary(); !bytes.Equal(a, b) {
			t.Fatalf("Str(%q) = %x, StrBytes = %x", s, a, b)
		}
	}
	tr := NewTrace(4)
	for i := 0; i < 4; i++ {
		tr.Rec(1, "k", "a").End() // the record buffer is made
	}
	allocs := testing.AllocsPerRun(100, func() {
		var buf [32]byte
		b := append(buf[:0], "node="...)
		b = strconv.AppendUint(b, 3, 10)
		tr.Rec(1, "k", "a").TextBytes(b).StrBytes("ts", b).End()
	})
	if allocs != 0 {
		t.Fatalf("a record built from a stack buffer allocated %v times", allocs)
	}
}

func TestRenderDetailMarksMalformedInput(t *testing.T) {
	good := NewDetail().Str("s", "hello").Binary()
	for _, b := range [][]byte{good[:len(good)-2], {0x7f}, {tagEnd}} {
		if got := RenderDetail(b); !strings.Contains(got, "!malformed") {
			t.Fatalf("RenderDetail(%x) = %q, want a malformed marker", b, got)
		}
	}
}

func TestTraceDigestCoversDetails(t *testing.T) {
	mk := func(v uint64) string {
		tr := NewTrace(2)
		tr.Rec(1, "k", "a").Uint("n", v).End()
		tr.Add(2, "k", "a", "text")
		return tr.Digest()
	}
	if mk(1) != mk(1) {
		t.Fatal("same records, different digests")
	}
	if mk(1) == mk(2) {
		t.Fatal("different details, same digest")
	}
	// A record's end is part of the encoding: one record with two fields
	// differs from two records.
	a, b := NewTrace(1), NewTrace(1)
	a.Rec(1, "k", "").Uint("n", 1).Uint("n", 2).End()
	b.Rec(1, "k", "").Uint("n", 1).End()
	b.seq-- // same sequence number for the second record
	b.Rec(1, "k", "").Uint("n", 2).End()
	if a.Digest() == b.Digest() {
		t.Fatal("record boundaries are not part of the digest")
	}
}

func TestTraceDigestIsBlake3OfTheRecords(t *testing.T) {
	// The digest is blake3 of the records' encodings laid end to end, large
	// records (beyond the hasher's buffer) included.
	big := bytes.Repeat([]byte{0xab}, 4*8192)
	tr := NewTrace(1)
	var whole []byte
	for i := 0; i < 9; i++ {
		tr.Rec(Time(i), "k", "x").Bytes("v", big[:i*3700]).End()
		whole = binary.AppendUvarint(whole, uint64(i+1))
		whole = binary.AppendVarint(whole, int64(i))
		whole = append(whole, 1, 'k', 1, 'x')
		whole = append(whole, NewDetail().Bytes("v", big[:i*3700]).Binary()...)
		whole = append(whole, tagEnd)
	}
	sum := blake3.Sum256(whole)
	if got, want := tr.Digest(), hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("trace digest %s, blake3 of the encoding %s", got, want)
	}
}

func TestTraceTailRendersTheLastRecords(t *testing.T) {
	tr := NewTrace(2)
	for i := 0; i < 5; i++ {
		tr.Rec(Time(i), "k", "a").Uint("i", uint64(i)).End()
	}
	tail := tr.Tail()
	if len(tail) != 2 || tail[0].Seq != 4 || tail[1].Seq != 5 || tail[0].Detail != "i=3" || tail[1].Detail != "i=4" {
		t.Fatalf("tail = %+v", tail)
	}
}

func TestCountingTraceCountsAndKeepsNothing(t *testing.T) {
	tr := NewCountingTrace()
	for i := 0; i < 3; i++ {
		d := tr.Rec(Time(i), "k", "a").Uint("i", uint64(i)).Open("g").Str("s", "x").Err("e", errors.New("no")).Close()
		if b := d.Binary(); len(b) != 0 {
			t.Fatalf("a counting trace's record encoded %q", b)
		}
		d.End()
	}
	if d := tr.Digest(); d != "" {
		t.Fatalf("digest %q of a counting trace", d)
	}
	if tail := tr.Tail(); tr.Len() != 3 || len(tail) != 0 {
		t.Fatalf("len %d, tail %+v", tr.Len(), tail)
	}
	tr.Rec(4, "outer", "")
	defer func() {
		if recover() == nil {
			t.Fatal("a second record started before the first ended")
		}
	}()
	tr.Rec(4, "inner", "")
}

func TestTraceRecordsDoNotNest(t *testing.T) {
	tr := NewTrace(1)
	tr.Rec(1, "outer", "")
	defer func() {
		if recover() == nil {
			t.Fatal("a second record started before the first ended")
		}
	}()
	tr.Rec(1, "inner", "")
}

func TestTraceJSONLinesAreUnescaped(t *testing.T) {
	var out bytes.Buffer
	tr := NewTrace(1)
	tr.WriteJSON(&out)
	tr.Rec(5, "kv.apply", "").Int("rev", 1).Text("->").Int("", 2).Err("err", errors.New("a <b>")).End()
	line := out.String()
	if strings.Contains(line, `\u00`) {
		t.Fatalf("escaped JSON line: %s", line)
	}
	var r Record
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if r.Seq != 1 || r.At != 5 || r.Kind != "kv.apply" || r.Detail != `rev=1 -> 2 err="a <b>"` {
		t.Fatalf("record = %+v", r)
	}
}

func TestDetailRawIsTheFieldsAgain(t *testing.T) {
	fields := func(d *Detail) *Detail {
		return d.Int("rev", 9).Open("then").Open("resp").Bytes("", []byte("k")).Uint("n", 3).Close().Close()
	}
	src := NewDetail().Uint("call", 1)
	at := len(src.Binary())
	fields(src)
	copied := append([]byte(nil), src.Binary()[at:]...)
	want := fields(NewDetail().Str("x", "y"))
	got := NewDetail().Str("x", "y").Raw(copied)
	if !bytes.Equal(got.Binary(), want.Binary()) || got.String() != want.String() {
		t.Fatalf("raw copy %q (%s), fields again %q (%s)", got.Binary(), got, want.Binary(), want)
	}
	tr := NewTrace(4)
	tr.Rec(5, "k", "a").Uint("call", 1).Raw(copied).End()
	again := NewTrace(4)
	fields(again.Rec(5, "k", "a").Uint("call", 1)).End()
	if tr.Digest() != again.Digest() {
		t.Fatal("a record with copied fields hashes differently from one with the fields added")
	}
	counting := NewCountingTrace()
	counting.Rec(5, "k", "a").Raw(copied).End()
	if counting.Len() != 1 {
		t.Fatalf("counting trace: %d records", counting.Len())
	}
}
