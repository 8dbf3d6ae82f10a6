package simclock

// NextID returns a new identifier, unique within the loop's world, from 1.
// Simulated networks number their calls with it, so a call keeps one id in
// the trace whichever of a world's servers serves it, and an id names one
// call, not one per server. The counter is shared by the whole world, so
// with states tracked the running event counts as shared.
func (l *Loop) NextID() uint64 {
	if l.st != nil {
		l.st.touched = true
	}
	l.ids++
	return l.ids
}
