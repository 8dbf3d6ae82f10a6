package simclock

// Recording captures every draw of a run, from the root and all its forks, in
// the order they happened, encoded exactly as NewBytes decodes them. Feeding
// Bytes() to NewBytes therefore replays the run draw for draw, whatever the
// original source was: a seeded failure becomes a byte stream that the
// fuzzer's minimiser (or simrun shrink) can cut down.
type Recording struct {
	data []byte
}

// Bytes returns the recorded stream. The caller must not modify it.
func (r *Recording) Bytes() []byte { return r.data }

// Len returns the length of the recorded stream in bytes.
func (r *Recording) Len() int { return len(r.data) }

func (r *Recording) append(v uint64, width int) {
	for i := width - 1; i >= 0; i-- {
		r.data = append(r.data, byte(v>>(8*uint(i))))
	}
}

// NewRecorder wraps c so every draw made through the returned Choices (or its
// forks) is appended to the returned Recording. Draws made through c itself
// are not recorded, so wrap the root before anything forks it.
func NewRecorder(c *Choices) (*Choices, *Recording) {
	rec := &Recording{}
	return withSource(&recordingSource{inner: c.src, rec: rec}, c.draws), rec
}

type recordingSource struct {
	inner Source
	rec   *Recording
}

func (r *recordingSource) Draw(n uint64) uint64 {
	v := r.inner.Draw(n)
	r.rec.append(v, widthFor(n))
	return v
}

// DrawKind passes the draw's kind on to a source that wants it.
func (r *recordingSource) DrawKind(n uint64, kind DrawKind) uint64 {
	var v uint64
	if ks, ok := r.inner.(KindSource); ok {
		v = ks.DrawKind(n, kind)
	} else {
		v = r.inner.Draw(n)
	}
	r.rec.append(v, widthFor(n))
	return v
}

func (r *recordingSource) Fork(name string) Source {
	return &recordingSource{inner: r.inner.Fork(name), rec: r.rec}
}
