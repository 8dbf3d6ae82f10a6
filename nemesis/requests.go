package nemesis

import "shardsim/fate"

// RequestFaultRange bounds the request faults a swarm draws for one
// simulated network: each rate is on with probability On, then drawn in
// [Min, Max].
type RequestFaultRange struct {
	On                 float64
	MinLose, MaxLose   float64 // loss of the request, and loss of its answer
	MinDelay, MaxDelay float64 // an extra delay
}

// DrawRequestFaults draws a network's request-fault rates into base (whose
// latencies, deadline and longest delay the world sets): the options
// prefix+"lose_request", prefix+"lose_response" and prefix+"delay", in that
// order, so every world's fault mix is drawn alike and a new network adds
// one call with its own prefix.
func DrawRequestFaults(sw *Swarm, prefix string, r RequestFaultRange, base fate.Config) fate.Config {
	base.LoseRequest = sw.Rate(prefix+"lose_request", r.On, r.MinLose, r.MaxLose)
	base.LoseResponse = sw.Rate(prefix+"lose_response", r.On, r.MinLose, r.MaxLose)
	base.Delay = sw.Rate(prefix+"delay", r.On, r.MinDelay, r.MaxDelay)
	return base
}
