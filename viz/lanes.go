package viz

import (
	"fmt"
	"regexp"
	"strings"

	"shardsim/simclock"
	"shardsim/timeline"
)

// mark is one drawn record.
type mark struct {
	At      simclock.Time
	Lane    int
	Cat     timeline.Category
	Kind    string
	Label   string        // the tooltip
	Culprit bool          // named by the violation
	Until   simclock.Time // for a fault: when its heal came (0: never seen)
}

// lanes turns records into one lane per actor, in order of first
// appearance (world records, with no actor, get a "world" lane), and the
// marks to draw on them: everything but bookkeeping.
func lanes(records []simclock.Record, culprits []string) ([]string, []mark) {
	var names []string
	index := map[string]int{}
	laneOf := func(actor string) int {
		if actor == "" {
			actor = "world"
		}
		if i, ok := index[actor]; ok {
			return i
		}
		index[actor] = len(names)
		names = append(names, actor)
		return index[actor]
	}
	spawned := map[string]bool{}
	for _, r := range records {
		if r.Kind == "actor.spawn" {
			spawned[r.Actor] = true
		}
	}
	var marks []mark
	open := map[string]int{} // lane/fault family -> index of the open fault mark
	step := violationStep(records)
	for i, r := range records {
		cat := timeline.Classify(r)
		if cat == timeline.Other && !step[i] {
			continue
		}
		m := mark{At: r.At, Lane: laneOf(victim(r, cat, spawned)), Cat: cat, Kind: r.Kind,
			Label: fmt.Sprintf("%s  %s  %s  %s", fmtTime(r.At), r.Kind, r.Actor, r.Detail)}
		m.Culprit = cat != timeline.Violation && (step[i] || names2culprit(r.Detail, culprits))
		if fam := faultFamily(r.Kind); fam != "" {
			key := fmt.Sprintf("%d/%s", m.Lane, fam)
			switch cat {
			case timeline.Fault:
				open[key] = len(marks)
			case timeline.Heal:
				if i, ok := open[key]; ok {
					marks[i].Until = r.At
					delete(open, key)
				}
			}
		}
		if r.Kind == "kv.heal-all" || r.Kind == "nemesis.heal" {
			for key, i := range open {
				marks[i].Until = r.At
				delete(open, key)
			}
		}
		marks = append(marks, m)
	}
	return names, marks
}

// victim is the lane a record belongs on: a fault or heal the nemesis
// logs under its own name goes on the lane of the actor it names first
// ("n1 drift 180939ppm", "w0 by 5ms").
func victim(r simclock.Record, cat timeline.Category, spawned map[string]bool) string {
	if (cat == timeline.Fault || cat == timeline.Heal) && r.Actor == "nemesis" {
		if first, _, _ := strings.Cut(r.Detail, " "); spawned[first] {
			return first
		}
	}
	return r.Actor
}

// faultFamily pairs a fault with the record that ends it on the same lane.
func faultFamily(kind string) string {
	switch kind {
	case "actor.pause", "actor.resume":
		return "pause"
	case "actor.crash", "actor.restart":
		return "crash"
	case "kv.partition", "kv.heal":
		return "partition"
	}
	return ""
}

// violationStep returns the indices of the records of the step in which
// the violation was found: the records just before the first violation
// record, at its time. (Checkers run after every event, so the event that
// broke the property logged them; an earlier event at the same instant may
// be included.)
func violationStep(records []simclock.Record) map[int]bool {
	step := map[int]bool{}
	for i, r := range records {
		if r.Kind != "violation" {
			continue
		}
		for j := i - 1; j >= 0 && records[j].At == r.At && records[j].Kind != "violation"; j-- {
			step[j] = true
		}
		break
	}
	return step
}

// opRef finds the "#N" operation numbers a violation's detail names.
var opRef = regexp.MustCompile(`#[0-9]+\b`)

// culpritsOf returns the operation references in a violation's detail.
func culpritsOf(detail string) []string { return opRef.FindAllString(detail, -1) }

// names2culprit reports whether a record is one of the named operations:
// its detail starts with the reference.
func names2culprit(detail string, culprits []string) bool {
	for _, c := range culprits {
		if strings.HasPrefix(detail, c+" ") {
			return true
		}
	}
	return false
}

func fmtTime(t simclock.Time) string { return fmt.Sprintf("%.6fs", float64(t)/1e9) }
