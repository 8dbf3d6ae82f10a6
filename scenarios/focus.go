package scenarios

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"

	"shardsim/property"
	"shardsim/simclock"
)

// FocusTail returns the events a report of res should show, and the
// entity they concern: the last records about the entity its violation
// names (res.Subject: a key or a job; a violation that names none but
// whose detail starts from "job N" concerns that job), then the violation
// itself. A run keeps only its last records, so this runs the world once
// more (the same config gives the same run) with its trace going through a
// filter. Without such a subject, or when the scenario already narrowed
// its tail (a coordination shard), it returns res.Tail.
//
// What concerns a key: a record whose detail names the key (as a whole
// word, quoted or as the last part of a path), and every later record of
// the same call (call=N) as one that did. What concerns a job: a record
// naming it as jN or job=N. When the violation's detail names a call
// (call=N: the operation a history check could not place), the events
// shown end a few records after that call's answer, so the story around it
// is not pushed out by later events of the same key.
func FocusTail(cfg Config, res Result) ([]simclock.Record, property.Subject) {
	subj := res.Subject
	if m := jobInDetail.FindStringSubmatch(res.Detail); subj.ID == "" && m != nil {
		subj = property.Subject{Kind: property.SubjectJob, ID: m[1]}
	}
	match := subjectMatcher(subj)
	if match == nil || res.Verdict == property.VerdictOK {
		return res.Tail, res.Subject
	}
	sink := &focusSink{match: match, calls: map[string]bool{}}
	if m := callField.FindStringSubmatch(res.Detail); m != nil {
		sink.anchor = m[2]
	}
	cfg.TraceOut = sink
	cfg.Record = false
	if _, err := Run(res.Scenario, cfg); err != nil || len(sink.kept) == 0 {
		return res.Tail, res.Subject
	}
	out := sink.kept
	if len(out) > tailSize {
		out = out[len(out)-tailSize:]
	}
	if n := len(res.Tail); n > 0 && res.Tail[n-1].Kind == "violation" && out[len(out)-1].Kind != "violation" {
		out = append(out, res.Tail[n-1])
	}
	return out, subj
}

// jobInDetail finds the split job a violation's detail is about, for the
// migration checkers, which name it only there ("job 3 ...").
var jobInDetail = regexp.MustCompile(`^job (\d+)\b`)

// subjectMatcher returns a test for records about subj, or nil.
func subjectMatcher(subj property.Subject) func(detail string) bool {
	if subj.ID == "" {
		return nil
	}
	var re *regexp.Regexp
	switch subj.Kind {
	case property.SubjectKey:
		re = regexp.MustCompile(`(^|[\s"/(=])` + regexp.QuoteMeta(subj.ID) + `($|[\s")])`)
	case property.SubjectJob:
		re = regexp.MustCompile(`(^|[\s(])(j|job=)` + regexp.QuoteMeta(subj.ID) + `($|[\s)])`)
	default:
		return nil
	}
	return re.MatchString
}

// callField finds a record's call id (call=N).
var callField = regexp.MustCompile(`(^|\s)call=(\d+)`)

// focusSink reads a run's JSON-lines trace and keeps the last tailSize
// records that concern the subject.
type focusSink struct {
	match  func(string) bool
	calls  map[string]bool // calls of records that matched
	buf    []byte
	kept   []simclock.Record
	anchor string // the call the violation names, if any
	after  int    // records kept since the anchor's answer (-1: not yet)
}

// afterAnchor is how many records about the subject a report shows after
// the answer of the call the violation names.
const afterAnchor = 6

func (s *focusSink) Write(p []byte) (int, error) {
	s.buf = append(s.buf, p...)
	for {
		i := bytes.IndexByte(s.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		var r simclock.Record
		if json.Unmarshal(s.buf[:i], &r) == nil {
			s.consider(r)
		}
		s.buf = s.buf[i+1:]
	}
}

func (s *focusSink) consider(r simclock.Record) {
	call := ""
	if m := callField.FindStringSubmatch(r.Detail); m != nil {
		call = m[2]
	}
	relevant := r.Kind == "violation" || s.match(r.Detail) || call != "" && s.calls[call]
	if !relevant || s.anchor != "" && s.after >= afterAnchor && r.Kind != "violation" {
		return
	}
	if s.after > 0 || s.anchor != "" && call == s.anchor && r.Kind == "kv.return" {
		s.after++
	}
	if call != "" && strings.HasPrefix(r.Kind, "kv.") {
		s.calls[call] = true
	}
	s.kept = append(s.kept, r)
	if len(s.kept) > 4*tailSize {
		s.kept = append(s.kept[:0], s.kept[len(s.kept)-tailSize:]...)
	}
}
