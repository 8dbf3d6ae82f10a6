package scenarios

import (
	"strings"
	"testing"

	"shardsim/model/bugs"
	"shardsim/property"
)

// A failing kv run's report shows the events of the key its violation
// names, not the run's tail: every record shown names the key or belongs
// to a call that did, and the violation comes last.
func TestFocusTailShowsTheSubjectsEvents(t *testing.T) {
	// Seed 7: the first failing seed whose stuck operation names a key
	// (seed 3's, in the world with the resuming watcher, is a compaction).
	cfg := Config{Seed: 7, Bugs: bugs.MustParse(bugs.KVPhantomAck)}
	res, err := Run("kv", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != property.VerdictViolation || res.Subject.Kind != property.SubjectKey || res.Subject.ID == "" {
		t.Fatalf("seed 7 with kv.phantom-ack: %s %+v", res.Verdict, res.Subject)
	}
	key := `"` + res.Subject.ID + `"`
	tail, subj := FocusTail(cfg, res)
	if subj != res.Subject {
		t.Fatalf("focused on %+v, the violation names %+v", subj, res.Subject)
	}
	if len(tail) < 5 || tail[len(tail)-1].Kind != "violation" {
		t.Fatalf("focused tail of %d records, last %+v", len(tail), tail[len(tail)-1])
	}
	calls := map[string]bool{}
	for _, r := range tail[:len(tail)-1] {
		call := callField.FindStringSubmatch(r.Detail)
		switch {
		case strings.Contains(r.Detail, key):
			if call != nil {
				calls[call[2]] = true
			}
		case call != nil && calls[call[2]]:
		case call != nil:
			// a later record of a call that named the key before the
			// window began
		default:
			t.Errorf("record not about %s: %+v", key, r)
		}
	}
	// The events end a few records after the answer of the call the
	// violation names (the operation no order can place).
	anchor := callField.FindStringSubmatch(res.Detail)
	if anchor == nil {
		t.Fatalf("the violation names no call: %s", res.Detail)
	}
	answered := -1
	for i, r := range tail {
		if m := callField.FindStringSubmatch(r.Detail); m != nil && m[2] == anchor[2] && r.Kind == "kv.return" {
			answered = i
		}
	}
	if answered < 0 || len(tail)-1-answered > afterAnchor+1 {
		t.Fatalf("call %s's answer at %d of %d records shown", anchor[2], answered, len(tail))
	}
	var other bool
	for _, r := range res.Tail {
		other = other || !strings.Contains(r.Detail, key) && r.Kind == "kv.send"
	}
	if !other {
		t.Fatal("the run's own tail is all about the key: the test shows nothing")
	}
}

// Records about a job name it as jN or job=N; a key must be a whole word.
func TestSubjectMatchers(t *testing.T) {
	job := subjectMatcher(property.Subject{Kind: property.SubjectJob, ID: "1"})
	for detail, want := range map[string]bool{"j1 PLANNED->BACKFILL": true, "job=1 from=COPY": true, "j12 x": false, "g2 j1": true, "job=10": false} {
		if job(detail) != want {
			t.Errorf("job 1 matches %q: %v", detail, !want)
		}
	}
	key := subjectMatcher(property.Subject{Kind: property.SubjectKey, ID: "k1"})
	for detail, want := range map[string]bool{`put("k1" "v")`: true, `range("k10")`: false, `range("km/map/k1")`: true, `key=k1 value=x`: true} {
		if key(detail) != want {
			t.Errorf("key k1 matches %q: %v", detail, !want)
		}
	}
	if subjectMatcher(property.Subject{}) != nil {
		t.Error("no subject, yet a matcher")
	}
}

// A migration violation that names its job only in its detail is shown
// with that job's events.
func TestFocusTailFindsTheJobInTheDetail(t *testing.T) {
	cfg := Config{Seed: 2, Bugs: bugs.MustParse(bugs.MigrateCleanupBeforePromotion)}
	res, err := Run("migrate", cfg)
	if err != nil || res.Verdict != property.VerdictViolation || !strings.HasPrefix(res.Detail, "job ") {
		t.Fatalf("seed 2: %v %s %q", err, res.Verdict, res.Detail)
	}
	tail, subj := FocusTail(cfg, res)
	if subj.Kind != property.SubjectJob || subj.ID == "" || len(tail) < 3 {
		t.Fatalf("subject %+v, %d records", subj, len(tail))
	}
	match := subjectMatcher(subj)
	for _, r := range tail {
		if r.Kind != "violation" && !match(r.Detail) {
			t.Errorf("record not about job %s: %+v", subj.ID, r)
		}
	}
}
