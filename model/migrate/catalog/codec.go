package catalog

import (
	"fmt"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/wire"
)

const (
	codecTag     = 'C'
	codecVersion = 2
	// presizeMax bounds the routes Decode allocates room for up front (a
	// malformed count is only caught as the routes run out).
	presizeMax = 64

	// encodedHeaderSize bounds, loosely, the bytes of a record before its
	// routes: tag, version, three varints and the route count.
	encodedHeaderSize = 32
	// encodedRouteSize is the same for a route without its bounds' bytes:
	// ten varints and a flag, timestamps up to ten bytes each. A wrong
	// guess costs a buffer growth, not a wrong record.
	encodedRouteSize = 40
)

// Encode returns the catalog's stored form.
func (c Catalog) Encode() []byte {
	// About the record's size, so that it is written in one buffer.
	size := encodedHeaderSize
	for _, r := range c.Routes {
		size += encodedRouteSize + len(r.Start) + len(r.End)
	}
	w := wire.NewWriterSize(codecTag, codecVersion, size)
	w.Uint(c.Version)
	w.Uint(c.NextRouteID)
	w.Uint(c.LastCutover)
	w.Uint(uint64(len(c.Routes)))
	for _, r := range c.Routes {
		w.Uint(r.ID)
		w.String(r.Start)
		w.String(r.End)
		w.Int(int64(r.Group))
		w.Uint(uint64(r.State))
		w.Uint(r.Parent)
		w.Bool(r.StagedVisible)
		w.Uint(r.MigrationJob)
		w.Uint(uint64(r.MinWriteTSExclusive))
		w.Uint(uint64(r.MinReadTS))
	}
	return w.Done()
}

// DecodeVersion returns the version of a stored catalog without decoding
// the rest: a reader that only wants a newer catalog than its own can skip
// the full decode (the rest may still be malformed; Decode says).
func DecodeVersion(b []byte) (uint64, error) {
	rd := wire.MakeReader(b, codecTag, codecVersion)
	v := rd.Uint()
	if err := rd.Err(); err != nil {
		return 0, fmt.Errorf("catalog: decode: %w", err)
	}
	return v, nil
}

// Decode parses a stored catalog.
func Decode(b []byte) (Catalog, error) {
	rd := wire.MakeReader(b, codecTag, codecVersion)
	c := Catalog{Version: rd.Uint(), NextRouteID: rd.Uint(), LastCutover: rd.Uint()}
	n := rd.Count()
	if n > 0 && n <= presizeMax {
		c.Routes = make([]Route, 0, n)
	}
	for i := 0; i < n; i++ {
		r := Route{ID: rd.Uint(), Start: rd.String(), End: rd.String(), Group: int(rd.Int())}
		st := rd.Uint()
		r.Parent = rd.Uint()
		r.StagedVisible = rd.Bool()
		r.MigrationJob = rd.Uint()
		r.MinWriteTSExclusive = hlc.TS(rd.Uint())
		r.MinReadTS = hlc.TS(rd.Uint())
		if st > uint64(WriteFenced) {
			return Catalog{}, fmt.Errorf("catalog: decode: %w: route state %d", wire.ErrMalformed, st)
		}
		r.State = State(st)
		c.Routes = append(c.Routes, r)
	}
	if err := rd.Close(); err != nil {
		return Catalog{}, fmt.Errorf("catalog: decode: %w", err)
	}
	return c, nil
}
