package job

import (
	"bufio"
	"encoding/hex"
	"os"
	"testing"
)

// recordedJobs reads testdata/records.hex: one in ten of the job records
// the migrators of migrate seeds 1-30 encoded (about 205 bytes each on
// average), one hex record a line. testdata/README.md says how they were
// recorded and how to record them again after a change of the layout.
func recordedJobs(tb testing.TB) [][]byte {
	f, err := os.Open("testdata/records.hex")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var recs [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<16)
	for sc.Scan() {
		b, err := hex.DecodeString(sc.Text())
		if err != nil {
			tb.Fatal(err)
		}
		recs = append(recs, b)
	}
	if err := sc.Err(); err != nil || len(recs) == 0 {
		tb.Fatalf("testdata/records.hex: %d records, %v", len(recs), err)
	}
	return recs
}

// The recorded records decode and re-encode to the same bytes.
func TestRecordedJobsRoundTrip(t *testing.T) {
	for i, b := range recordedJobs(t) {
		j, err := Decode(b)
		if err != nil {
			t.Fatalf("record %d: %v (if the record layout changed on purpose, re-record testdata/records.hex as testdata/README.md says)", i, err)
		}
		if got := j.Encode(); string(got) != string(b) {
			t.Fatalf("record %d re-encodes as %x, want %x (if the record layout changed on purpose, re-record testdata/records.hex as testdata/README.md says)", i, got, b)
		}
	}
}

// Encode's size hint holds every recorded record (so it is written in one
// buffer) and is not far above it (so that buffer is in a size class near
// the record's). This is about speed only: a hint that is off costs a
// buffer growth or a larger allocation, never a wrong record. A change of
// the record layout (re-recorded as testdata/README.md says) may call for
// new encodedFixedSize and encodedBracketSize; the messages say which way.
func TestSizeHintFitsRecordedJobs(t *testing.T) {
	var records, hints int
	for i, b := range recordedJobs(t) {
		j, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if hint := j.sizeHint(); hint < len(b) {
			t.Fatalf("record %d is %d bytes, over Encode's size hint of %d (encodedFixedSize %d + strings + %d brackets of encodedBracketSize %d + cursors): "+
				"if the record layout grew, raise encodedFixedSize or encodedBracketSize in codec.go so that recorded records fit (this costs speed, not correctness)",
				i, len(b), hint, encodedFixedSize, len(j.Brackets), encodedBracketSize)
		}
		records, hints = records+len(b), hints+j.sizeHint()
	}
	if hints > records*5/4 {
		t.Fatalf("Encode's size hints add up to %d bytes for %d bytes of recorded records, over 5/4 of them: "+
			"if the record layout shrank, lower encodedFixedSize or encodedBracketSize in codec.go (a loose hint puts records in a larger size class)", hints, records)
	}
}

// BenchmarkDecode decodes every recorded record once per op, as the
// checkers do (DecodeWithoutBrackets) and as the migrator does (Decode).
func BenchmarkDecode(b *testing.B) {
	recs := recordedJobs(b)
	for _, c := range []struct {
		name   string
		decode func([]byte) (SplitJob, error)
	}{{"Decode", Decode}, {"WithoutBrackets", DecodeWithoutBrackets}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, r := range recs {
					if _, err := c.decode(r); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkEncode encodes every recorded record once per op.
func BenchmarkEncode(b *testing.B) {
	var jobs []SplitJob
	for _, r := range recordedJobs(b) {
		j, err := Decode(r)
		if err != nil {
			b.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, j := range jobs {
			_ = j.Encode()
		}
	}
}
