package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"shardsim/property"
	"shardsim/scenarios"
	"shardsim/simclock"
)

// report is everything a run's report shows, text or JSON.
type report struct {
	res     scenarios.Result
	subject property.Subject // what the shown events concern
	spec    replaySpec
	source  string            // "seed N", or the choices file
	replay  string            // the command that reproduces the run
	tail    []simclock.Record // the events shown for a run that did not pass
	saved   string            // where the run was saved, if it was
	outside []string          // overridden options above their drawn range
}

// newReport builds the report of res, run with cfg. For a run that did not
// pass it finds the events of the entity its violation names (which runs
// the world once more).
func newReport(res scenarios.Result, cfg scenarios.Config, spec replaySpec) *report {
	r := &report{res: res, spec: spec, source: fmt.Sprintf("seed %d", res.Seed), replay: spec.command()}
	if res.Verdict != property.VerdictOK {
		r.tail, r.subject = scenarios.FocusTail(cfg, res)
	}
	if res.Swarm != nil {
		r.outside = res.Swarm.Outside()
	}
	return r
}

// subjectText names the violation's subject, or "".
func subjectText(s property.Subject) string {
	if s.ID == "" {
		return ""
	}
	return fmt.Sprintf("%s %q", s.Kind, s.ID)
}

// print writes the text report.
func (r *report) print(w io.Writer) {
	res := r.res
	if r.saved != "" {
		fmt.Fprintf(w, "saved    %s\n", r.saved)
	}
	fmt.Fprintf(w, "scenario %s  %s  bugs %s\n", res.Scenario, r.source, res.Bugs)
	fmt.Fprintf(w, "swarm    %s\n", res.Swarm)
	if len(r.outside) > 0 {
		fmt.Fprintf(w, "note     above the drawn ranges (larger than any sweep covers): %s\n", strings.Join(r.outside, " "))
	}
	fmt.Fprintf(w, "events   %d  records %d  virtual %s  draws %d\n", res.Events, res.Records, fmtNs(res.VirtualNs), res.Draws)
	if len(res.Stats) > 0 {
		fmt.Fprintf(w, "stats    %s\n", fmtStats(res.Stats))
	}
	fmt.Fprintf(w, "digest   %s\n", res.Digest)
	fmt.Fprintf(w, "verdict  %s", res.Verdict)
	if res.Property != "" {
		fmt.Fprintf(w, "  %s", res.Property)
	}
	fmt.Fprintln(w)
	if res.Verdict == property.VerdictOK {
		return
	}
	fmt.Fprintf(w, "detail   %s\n", indentLines(res.Detail, "         "))
	if res.Verdict == property.VerdictUnknown {
		fmt.Fprintf(w, "undecided: the check ran out of its %v of wall-clock time; give it more with -check-timeout (e.g. -check-timeout %v)\n",
			r.spec.timeout(), 4*r.spec.timeout())
	}
	if s := subjectText(r.subject); s != "" {
		fmt.Fprintf(w, "last events of %s:\n", s)
	} else {
		fmt.Fprintln(w, "last events:")
	}
	for _, rec := range r.tail {
		fmt.Fprintf(w, "  %12s  %-18s %-10s %s\n", fmtNs(int64(rec.At)), rec.Kind, rec.Actor, indentLines(rec.Detail, "      "))
	}
	fmt.Fprintf(w, "replay   %s\n", r.replay)
}

func (s replaySpec) timeout() time.Duration {
	if s.checkTimeout == 0 {
		return defaultCheckTimeout
	}
	return s.checkTimeout
}

// runJSON is `simrun run -json`'s one object (and the heart of replay's).
type runJSON struct {
	Scenario     string            `json:"scenario"`
	Seed         *uint64           `json:"seed,omitempty"`         // absent for a run driven by choices
	ChoicesHash  string            `json:"choices_hash,omitempty"` // blake3 of the choice bytes
	ChoicesFile  string            `json:"choices_file,omitempty"`
	Verdict      string            `json:"verdict"`
	Property     property.Name     `json:"property"`
	Detail       string            `json:"detail,omitempty"`
	Subject      *property.Subject `json:"subject,omitempty"`
	Events       uint64            `json:"events"`
	Records      uint64            `json:"records"`
	VirtualNs    int64             `json:"virtual_ns"`
	Draws        uint64            `json:"draws"`
	Digest       string            `json:"digest"`
	Swarm        json.RawMessage   `json:"swarm"`   // every option's value
	Options      map[string]string `json:"options"` // the -opt overrides
	Outside      []string          `json:"above_drawn_range,omitempty"`
	Bugs         []string          `json:"bugs"`
	Stats        json.RawMessage   `json:"stats"`
	CheckTimeout string            `json:"check_timeout"`
	Replay       string            `json:"replay"`
	LastEvents   []simclock.Record `json:"last_events,omitempty"`
	Saved        string            `json:"saved,omitempty"`
}

func (r *report) json() runJSON {
	res := r.res
	swarm, _ := json.Marshal(res.Swarm)
	out := runJSON{
		Scenario: res.Scenario, ChoicesHash: res.ChoicesHash, ChoicesFile: r.spec.choicesFile,
		Verdict: string(res.Verdict), Property: res.Property, Detail: res.Detail,
		Events: res.Events, Records: res.Records, VirtualNs: res.VirtualNs, Draws: res.Draws, Digest: res.Digest,
		Swarm: swarm, Options: r.spec.options, Outside: r.outside, Bugs: append([]string{}, res.Bugs.Names()...),
		Stats: statsJSON(res.Stats), CheckTimeout: fmt.Sprint(r.spec.timeout()), Replay: r.replay,
		LastEvents: r.tail, Saved: r.saved,
	}
	if out.Options == nil {
		out.Options = map[string]string{}
	}
	if !res.FromBytes {
		seed := res.Seed
		out.Seed = &seed
	}
	if res.Subject.ID != "" {
		s := res.Subject
		out.Subject = &s
	}
	return out
}

// fmtStats renders a run's counters on one line, in the run's order.
func fmtStats(stats []scenarios.Stat) string {
	parts := make([]string, len(stats))
	for i, st := range stats {
		parts[i] = fmt.Sprintf("%s=%d", st.Name, st.Value)
	}
	return strings.Join(parts, " ")
}

// statsJSON renders the counters as one object, keys in the run's order.
func statsJSON(stats []scenarios.Stat) json.RawMessage {
	var b strings.Builder
	b.WriteByte('{')
	for i, st := range stats {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(st.Name)
		fmt.Fprintf(&b, "%s:%d", name, st.Value)
	}
	b.WriteByte('}')
	return json.RawMessage(b.String())
}
