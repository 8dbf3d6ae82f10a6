// Package timeline reads a run's trace as a story about actors: it sorts
// every record into requests, answers, faults, heals and the violation, and
// groups them by actor. The shrinker counts faults with it and the HTML
// report draws it.
package timeline

import (
	"strings"

	"shardsim/simclock"
)

// Category is what a trace record means to a reader of the run.
type Category int

const (
	// Other is bookkeeping: an apply on the server, a spawn, a watch.
	Other Category = iota
	// Request is a call an actor sent (a KV request, a protocol operation).
	Request
	// Answer is a call's outcome reaching its caller.
	Answer
	// Fault is something the nemesis or the network did to the world.
	Fault
	// Heal undoes a fault: a restart, a resume, a healed partition, the heal.
	Heal
	// Violation is the record of a violated property.
	Violation
	// Step is a protocol milestone: a migration phase or copy pass, an
	// operator's or the hotspot detector's decision, a raft election.
	Step
)

var categoryNames = [...]string{"other", "request", "answer", "fault", "heal", "violation", "step"}

// stepPrefixes are the record kinds (by prefix) that are protocol steps.
var stepPrefixes = []string{"mig.", "operator.", "hotspot.", "promote.", "grp."}

func (c Category) String() string {
	if int(c) < len(categoryNames) {
		return categoryNames[c]
	}
	return "category?"
}

// faultKinds are the record kinds that are faults whatever their detail.
var faultKinds = map[string]bool{
	"actor.crash": true, "actor.pause": true,
	"kv.partition": true, "kv.leader-change": true, "kv.answer-lost": true,
	"nemesis.crash": true, "nemesis.pause": true, "nemesis.leader": true,
	"nemesis.clock": true, "nemesis.clock-jump": true, "nemesis.clock-drift": true,
	"nemesis.lease-storm": true,
}

// healKinds are the record kinds that end a fault.
var healKinds = map[string]bool{
	"actor.restart": true, "actor.resume": true, "kv.heal": true, "kv.heal-all": true,
	"nemesis.heal": true, "nemesis.restart": true, "nemesis.resume": true,
}

// Classify says what one record means. A KV request the network dropped
// before the server saw it is a fault (its lost answer is logged on its
// own as kv.answer-lost); a protocol operation's record, written when its
// outcome is known, is an answer.
func Classify(r simclock.Record) Category {
	switch {
	case r.Kind == "violation":
		return Violation
	case faultKinds[r.Kind]:
		return Fault
	case healKinds[r.Kind]:
		return Heal
	case r.Kind == "kv.send":
		if strings.Contains(r.Detail, "fate=lost-request") {
			return Fault
		}
		return Request
	case r.Kind == "kv.return", r.Kind == "kv.refused":
		return Answer
	case r.Kind == "op.invoke": // a client operation no network traces (scenarios.OpTrace)
		return Request
	case r.Kind == "op.return":
		return Answer
	case strings.HasPrefix(r.Kind, "coord."), strings.HasPrefix(r.Kind, "client."):
		return Answer
	}
	for _, p := range stepPrefixes {
		if strings.HasPrefix(r.Kind, p) {
			return Step
		}
	}
	return Other
}
