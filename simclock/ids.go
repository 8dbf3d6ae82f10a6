package simclock

// NextID returns a new identifier, unique within the loop's world, from 1.
// Simulated networks number their calls with it, so a call keeps one id in
// the trace whichever of a world's servers serves it, and an id names one
// call, not one per server.
func (l *Loop) NextID() uint64 {
	l.ids++
	return l.ids
}
