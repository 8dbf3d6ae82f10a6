package simclock

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"

	"lukechampine.com/blake3"
)

// Record is one line of a run's trace.
type Record struct {
	Seq    uint64 `json:"seq"`    // position in the trace, from 1
	At     Time   `json:"t"`      // virtual time in nanoseconds
	Kind   string `json:"kind"`   // what happened, e.g. "kv.apply", "fault.crash"
	Actor  string `json:"actor"`  // who it happened to, or "" for the world
	Detail string `json:"detail"` // deterministic description
}

// Trace collects the records of a run. Every record is folded into a blake3
// digest over a canonical, length-prefixed encoding; records are also kept in
// a bounded tail (for violation reports) and written as JSON lines when a
// writer is attached. The digest identifies the run: same inputs, same digest.
type Trace struct {
	hash    *blake3.Hasher
	seq     uint64
	tail    []Record
	tailCap int
	tailPos int
	out     *json.Encoder
	outErr  error
	scratch []byte
}

// NewTrace returns a trace that keeps the last tailCap records in memory.
func NewTrace(tailCap int) *Trace {
	if tailCap < 1 {
		tailCap = 1
	}
	return &Trace{hash: blake3.New(32, nil), tailCap: tailCap}
}

// WriteJSON makes the trace also write every record to w as one JSON object
// per line.
func (t *Trace) WriteJSON(w io.Writer) { t.out = json.NewEncoder(w) }

// Add appends a record at virtual time at.
func (t *Trace) Add(at Time, kind, actor, detail string) {
	t.seq++
	r := Record{Seq: t.seq, At: at, Kind: kind, Actor: actor, Detail: detail}
	b := t.scratch[:0]
	b = binary.AppendUvarint(b, r.Seq)
	b = binary.AppendVarint(b, int64(r.At))
	for _, s := range [...]string{r.Kind, r.Actor, r.Detail} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	t.hash.Write(b)
	t.scratch = b
	if len(t.tail) < t.tailCap {
		t.tail = append(t.tail, r)
	} else {
		t.tail[t.tailPos] = r
		t.tailPos = (t.tailPos + 1) % t.tailCap
	}
	if t.out != nil && t.outErr == nil {
		t.outErr = t.out.Encode(r)
	}
}

// Len returns how many records the trace holds in all.
func (t *Trace) Len() uint64 { return t.seq }

// Digest returns the hex blake3 digest of every record so far.
func (t *Trace) Digest() string { return hex.EncodeToString(t.hash.Sum(nil)) }

// Tail returns the last records kept in memory, oldest first.
func (t *Trace) Tail() []Record {
	out := make([]Record, 0, len(t.tail))
	out = append(out, t.tail[t.tailPos:]...)
	return append(out, t.tail[:t.tailPos]...)
}

// Err returns the first error from writing JSON lines, if any.
func (t *Trace) Err() error { return t.outErr }
