package job

import (
	"bufio"
	"encoding/hex"
	"os"
	"testing"
)

// recordedJobs reads testdata/records.hex: one in ten of the job records
// the migrators of migrate seeds 1-30 encoded (about 205 bytes each on
// average), one hex record a line.
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
			t.Fatalf("record %d: %v", i, err)
		}
		if got := j.Encode(); string(got) != string(b) {
			t.Fatalf("record %d re-encodes as %x, want %x", i, got, b)
		}
	}
}

// Encode's size hint holds every recorded record (so it is written in one
// buffer) and is not far above it (so that buffer is in a size class near
// the record's).
func TestSizeHintFitsRecordedJobs(t *testing.T) {
	var records, hints int
	for i, b := range recordedJobs(t) {
		j, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		hint := j.sizeHint()
		if hint < len(b) || hint > len(b)+encodedFixedSize {
			t.Fatalf("record %d of %d bytes: size hint %d", i, len(b), hint)
		}
		records, hints = records+len(b), hints+hint
	}
	if hints > records*5/4 {
		t.Fatalf("the size hints add up to %d bytes for %d bytes of records", hints, records)
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
