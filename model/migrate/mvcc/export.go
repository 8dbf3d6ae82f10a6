package mvcc

import (
	"encoding/binary"
	"errors"
	"sort"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
)

// Cursor is an export position: the last (raw key, commit ts) emitted or
// scanned, in (raw key ASC, commit ts DESC) order. Resuming is exclusive of
// it, so one hot key's history may span any number of chunks. The zero
// Cursor is the start of a bracket.
type Cursor struct {
	Set bool
	Key string
	TS  hlc.TS
}

// Encode returns the cursor's opaque form.
func (c Cursor) Encode() []byte {
	if !c.Set {
		return nil
	}
	// Sized once: growing from the varint reallocated for the key.
	b := make([]byte, 0, binary.MaxVarintLen64+len(c.Key)+8)
	b = binary.AppendUvarint(b, uint64(len(c.Key)))
	b = append(b, c.Key...)
	return binary.BigEndian.AppendUint64(b, uint64(c.TS))
}

// DecodeCursor parses an opaque cursor.
func DecodeCursor(b []byte) (Cursor, error) {
	if len(b) == 0 {
		return Cursor{}, nil
	}
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) != n+8 {
		return Cursor{}, errors.New("mvcc: malformed export cursor")
	}
	k := string(b[w : w+int(n)])
	ts := binary.BigEndian.Uint64(b[w+int(n):])
	return Cursor{Set: true, Key: k, TS: hlc.TS(ts)}, nil
}

// ExportMode selects how Export walks versions. Everything but
// ExportVersions is a deliberately wrong variant kept for bug injection.
type ExportMode int

const (
	// ExportVersions emits every version in (Low, High], tombstones and
	// TTLs included, with a (key, ts) cursor.
	ExportVersions ExportMode = iota
	// ExportKeyCursor is ExportVersions with a cursor that keeps the raw key
	// only: a resume skips the rest of a key cut mid-history.
	ExportKeyCursor
	// ExportReadVisible emits per key only the newest version <= High, and
	// only when a read at High would see it (no tombstones, no history).
	ExportReadVisible
)

// ExportRequest asks for one chunk of one bracket.
type ExportRequest struct {
	Bracket keys.Bracket
	Span    keys.Span // the moving route-key span
	Low     hlc.TS    // exclusive
	High    hlc.TS    // inclusive
	After   Cursor
	MaxRows int // rows emitted per chunk
	Budget  int // rows scanned per chunk, rejected ones included
	Mode    ExportMode
	// RawOnly filters by raw key alone (no family or route-key check): the
	// wrong "export the raw [start, end)" variant.
	RawOnly bool
}

// ExportResult is one chunk.
type ExportResult struct {
	Rows    []Row
	Next    Cursor // resume point: the last position emitted or scanned
	Done    bool   // the bracket is exhausted
	Scanned int
}

// Export returns the next chunk of versions of the bracket after req.After.
// A row is accepted when its family and route key match the bracket and
// span (RawOnly: when its raw key is in the span) and Low < ts <= High.
// Rejected rows count against Budget, so a sparse bracket still advances.
func (s *Store) Export(req ExportRequest) ExportResult {
	var res ExportResult
	maxRows, budget := req.MaxRows, req.Budget
	if maxRows <= 0 {
		maxRows = 1
	}
	if budget < maxRows {
		budget = maxRows
	}
	raw := req.Bracket.Raw
	if req.RawOnly {
		raw = req.Span
	}
	start := raw.Start
	if req.After.Set && req.After.Key > start {
		start = req.After.Key
	}
	o := &s.order
	for p := o.seek(start); o.valid(p); p = o.next(p) {
		k := o.key(p)
		if raw.End != "" && k >= raw.End {
			break
		}
		match := raw.Contains(k)
		if !req.RawOnly {
			match = match && keys.InBracket(k, req.Bracket, req.Span)
		}
		vs := o.rec(p).vs
		j := 0
		if req.After.Set && k == req.After.Key {
			if req.Mode != ExportVersions {
				continue // these cursors cannot resume inside a key
			}
			j = sort.Search(len(vs), func(j int) bool { return vs[j].TS < req.After.TS })
		}
		if req.Mode == ExportReadVisible {
			res.Scanned++
			if match {
				if v, ok := s.Newest(k, req.High); ok && v.TS > req.Low && v.VisibleAt(req.High) {
					res.addRow(Row{Key: k, Version: v}, maxRows)
				}
			}
			res.Next = Cursor{Set: true, Key: k, TS: 0}
			if len(res.Rows) >= maxRows || res.Scanned >= budget {
				res.Done = s.lastIn(p, raw)
				return res
			}
			continue
		}
		for ; j < len(vs); j++ {
			v := vs[j]
			res.Scanned++
			if match && v.TS > req.Low && v.TS <= req.High {
				res.addRow(Row{Key: k, Version: v}, maxRows)
			}
			res.Next = Cursor{Set: true, Key: k, TS: v.TS}
			if len(res.Rows) >= maxRows || res.Scanned >= budget {
				res.Done = s.exhaustedAfter(p, j, raw)
				if req.Mode == ExportKeyCursor {
					res.Next.TS = 0
				}
				return res
			}
		}
	}
	res.Done = true
	if req.Mode == ExportKeyCursor {
		res.Next.TS = 0
	}
	return res
}

// maxChunkRoom caps the room a chunk's first row makes (see addRow), so a
// huge -opt export_rows does not allocate for rows that never come.
const maxChunkRoom = 64

// addRow appends r to the chunk. The first row makes room for a full chunk
// (maxRows, at most maxChunkRoom): a chunk that has one row mostly fills up,
// and growing from one reallocated at 2, 4 and 8 rows. An empty chunk
// allocates nothing.
func (res *ExportResult) addRow(r Row, maxRows int) {
	if res.Rows == nil {
		res.Rows = make([]Row, 0, min(maxRows, maxChunkRoom))
	}
	res.Rows = append(res.Rows, r)
}

// exhaustedAfter reports whether nothing in raw follows version j of the
// key at p.
func (s *Store) exhaustedAfter(p pos, j int, raw keys.Span) bool {
	if j+1 < len(s.order.rec(p).vs) {
		return false
	}
	return s.lastIn(p, raw)
}

// lastIn reports whether no key of raw follows the key at p.
func (s *Store) lastIn(p pos, raw keys.Span) bool {
	n := s.order.next(p)
	return !s.order.valid(n) || (raw.End != "" && s.order.key(n) >= raw.End)
}
