package simclock

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"

	"github.com/zeebo/blake3"
)

// Record is one line of a run's trace, rendered as text.
type Record struct {
	Seq    uint64 `json:"seq"`    // position in the trace, from 1
	At     Time   `json:"t"`      // virtual time in nanoseconds
	Kind   string `json:"kind"`   // what happened, e.g. "kv.apply", "fault.crash"
	Actor  string `json:"actor"`  // who it happened to, or "" for the world
	Detail string `json:"detail"` // the record's Detail as text
}

// recordLine is a record as a JSON-lines trace writes it: the record and
// its Detail once more as one JSON object of typed fields (DetailJSON), for
// tools. Readers that want only the text decode the line into a Record.
type recordLine struct {
	Record
	Fields json.RawMessage `json:"fields"`
}

// Trace collects the records of a run. Every record is a compact canonical
// binary encoding (sequence number, time, kind, actor, then the Detail's
// self-delimiting tokens and an end tag) folded into a blake3 digest as it
// is added: same inputs, same digest. Nothing is formatted as text while a
// run goes on unless a JSON-lines writer is attached; the last records are
// kept in binary in a bounded ring and rendered only when Tail is asked for.
// A record is encoded straight into the ring slot it will occupy (the
// oldest one), so keeping it costs no copy, and a slot's buffer is reused
// by every record that passes through it.
type Trace struct {
	hash    *blake3.Hasher
	seq     uint64
	ring    []tailRecord
	ringPos int // the oldest slot once the ring is full
	cur     int // the slot of the record under construction
	out     *json.Encoder
	outErr  error
	rec     Detail // the record under construction
	open    bool   // rec has been started and not ended
	count   bool   // keep no record, only count them (NewCountingTrace)
	// reused: the trace's buffers go back to spareTraces when the loop
	// writing it closes (NewReusedTrace); released: they went back, and
	// the trace only counts what is still recorded and cannot be read.
	reused, released bool
}

// tailRecord is a record kept for Tail: its whole encoding (enc, header
// and end tag included), its detail's tokens being enc[start:len(enc)-1].
// seq is 0 while the slot holds a record under construction.
type tailRecord struct {
	seq   uint64
	at    Time
	kind  string
	actor string
	enc   []byte
	start int
}

// slotBytes is a ring slot's first buffer: most records fit, so few grow.
const slotBytes = 1024

// NewTrace returns a trace that keeps the last tailCap records in memory.
func NewTrace(tailCap int) *Trace {
	if tailCap < 1 {
		tailCap = 1
	}
	return &Trace{hash: blake3.New(), ring: make([]tailRecord, 0, tailCap)}
}

// NewReusedTrace returns a trace like NewTrace(tailCap) built on the
// buffers (hasher, ring and its slots' encodings) of a trace whose loop has
// closed, when there is one (see spareTraces). Its own buffers go back for
// the next world when the loop that writes it closes (Loop.Close): read
// its Digest and Tail before, as a world's Result does; after, they panic.
// Each world made afresh a hasher and a ring of tailCap slot buffers of
// slotBytes each, about 55 KB for a migrate world's 40.
func NewReusedTrace(tailCap int) *Trace {
	if tailCap < 1 {
		tailCap = 1
	}
	t := reusedTrace(tailCap)
	if t == nil {
		t = NewTrace(tailCap)
	}
	t.reused = true
	return t
}

// traceBuffers are what a closed loop's trace leaves for the next one.
type traceBuffers struct {
	hash *blake3.Hasher
	ring []tailRecord // emptied, its slots' encodings kept beyond len
}

// spareTraces keeps the buffers of the traces of closed loops for the
// next worlds of the process, as spareCoroutines keeps coroutines. The
// buffers of a released trace are reset before they are used again (the
// hasher to its initial state, every slot rewritten before it is read), so
// which buffers a trace gets changes no record, digest or tail, even for
// worlds that run in parallel. At most maxSpareTraces are kept.
var spareTraces = spareList[traceBuffers]{max: maxSpareTraces}

// maxSpareTraces bounds the spares: one for each of a few parallel workers.
const maxSpareTraces = 8

// reusedTrace returns a fresh trace on spare buffers with tailCap slots,
// or nil if no spare has that many.
func reusedTrace(tailCap int) *Trace {
	b, ok := spareTraces.take(func(b traceBuffers) bool { return cap(b.ring) == tailCap })
	if !ok {
		return nil
	}
	b.hash.Reset()
	return &Trace{hash: b.hash, ring: b.ring[:0]}
}

// release gives the buffers of a trace made by NewReusedTrace back to the
// spares (Loop.Close calls it), once. The trace then only counts records:
// Digest and Tail panic.
func (t *Trace) release() {
	if !t.reused || t.released || t.open {
		return // a record left open is still being written: keep its buffers
	}
	t.released, t.count, t.out = true, true, nil
	spareTraces.keep(traceBuffers{hash: t.hash, ring: t.ring})
	t.hash, t.ring, t.ringPos, t.cur = nil, nil, 0, 0
}

// mustBeReadable panics if the trace's buffers were released.
func (t *Trace) mustBeReadable() {
	if t.released {
		panic("simclock: a trace read after its loop closed (NewReusedTrace)")
	}
}

// NewCountingTrace returns a trace that only counts its records (Len): it
// encodes none of their fields, keeps no tail (Tail is empty) and no
// digest (Digest returns ""). It is for runs nobody reads the trace of,
// such as the millions a model checker makes, where encoding and hashing
// every record cost about a tenth of the instructions. JSON lines cannot
// be written from it.
func NewCountingTrace() *Trace { return &Trace{count: true} }

// WriteJSON makes the trace also write every record to w as one JSON object
// per line, its detail rendered as text. A counting trace refuses (panics).
func (t *Trace) WriteJSON(w io.Writer) {
	if t.count {
		panic("simclock: a counting trace writes no JSON lines")
	}
	t.out = json.NewEncoder(w)
	t.out.SetEscapeHTML(false) // "->" stays readable, not "-\u003e"
}

// Rec starts a record at virtual time at; fill its Detail and call End.
// Records do not nest: starting one before the last has ended panics.
func (t *Trace) Rec(at Time, kind, actor string) *Detail {
	if t.open {
		panic("simclock: trace record " + t.rec.kind + " was never ended")
	}
	t.open = true
	t.seq++
	if t.count {
		t.rec = Detail{tr: t, kind: kind, drop: true}
		return &t.rec
	}
	slot := t.next()
	if slot.enc == nil {
		slot.enc = make([]byte, 0, slotBytes)
	}
	b := binary.AppendUvarint(slot.enc[:0], t.seq)
	b = binary.AppendVarint(b, int64(at))
	b = binary.AppendUvarint(b, uint64(len(kind)))
	b = append(b, kind...)
	b = binary.AppendUvarint(b, uint64(len(actor)))
	b = append(b, actor...)
	slot.seq = 0 // not a finished record until end, which fills in the rest
	t.rec = Detail{b: b, start: len(b), tr: t, at: at, kind: kind, actor: actor}
	return &t.rec
}

// next picks the ring slot of a new record (a new one while the ring is
// not full, else the oldest, which the ring then moves past) and returns it.
func (t *Trace) next() *tailRecord {
	if len(t.ring) < cap(t.ring) {
		t.ring = t.ring[:len(t.ring)+1] // a spare ring's slot keeps its buffer
		t.cur = len(t.ring) - 1
	} else {
		t.cur = t.ringPos
		t.ringPos = (t.ringPos + 1) % len(t.ring)
	}
	return &t.ring[t.cur]
}

// Add appends a record at virtual time at whose detail is free text.
func (t *Trace) Add(at Time, kind, actor, detail string) {
	d := t.Rec(at, kind, actor)
	if detail != "" {
		d.Text(detail)
	}
	d.End()
}

// end finishes the record under construction (Detail.End).
func (t *Trace) end(d *Detail) {
	if !t.open || d != &t.rec {
		panic("simclock: Detail.End on a record that is not open")
	}
	t.open = false
	if t.count {
		return
	}
	body := d.b[d.start:]
	if t.out != nil && t.outErr == nil {
		t.writeJSON(d, body)
	}
	enc := append(d.b, tagEnd)
	d.b = nil
	t.hash.Write(enc) // the hasher buffers, and compresses 8 chunks at once
	t.ring[t.cur] = tailRecord{seq: t.seq, at: d.at, kind: d.kind, actor: d.actor, enc: enc, start: d.start}
}

func (t *Trace) writeJSON(d *Detail, body []byte) {
	t.outErr = t.out.Encode(recordLine{Record{Seq: t.seq, At: d.at, Kind: d.kind, Actor: d.actor, Detail: RenderDetail(body)}, DetailJSON(body)})
}

// Len returns how many records the trace holds in all.
func (t *Trace) Len() uint64 { return t.seq }

// Digest returns the hex blake3 digest of every record so far ("" for a
// counting trace).
func (t *Trace) Digest() string {
	t.mustBeReadable()
	if t.count {
		return ""
	}
	return hex.EncodeToString(t.hash.Sum(nil))
}

// Tail returns the last records kept in memory, oldest first, rendered.
func (t *Trace) Tail() []Record {
	t.mustBeReadable()
	out := make([]Record, 0, len(t.ring))
	for _, part := range [][]tailRecord{t.ring[t.ringPos:], t.ring[:t.ringPos]} {
		for _, r := range part {
			if r.seq == 0 {
				continue // the record under construction
			}
			out = append(out, Record{Seq: r.seq, At: r.at, Kind: r.kind, Actor: r.actor, Detail: RenderDetail(r.enc[r.start : len(r.enc)-1])})
		}
	}
	return out
}

// Err returns the first error from writing JSON lines, if any.
func (t *Trace) Err() error { return t.outErr }
