package viz

import (
	"strings"
	"testing"

	"shardsim/simclock"
	"shardsim/timeline"
)

func rec(at int64, kind, actor, detail string) simclock.Record {
	return simclock.Record{At: simclock.Time(at), Kind: kind, Actor: actor, Detail: detail}
}

var story = []simclock.Record{
	rec(0, "actor.spawn", "w0", ""),
	rec(0, "actor.spawn", "n1", ""),
	rec(1, "kv.send", "w0", "call=1 fate=delivered put(a)"),
	rec(2, "kv.apply", "", "call=1 rev=1->2"),
	rec(3, "coord.claim", "w0", "#7 w0.0 claim -> executed"),
	rec(4, "nemesis.clock", "nemesis", "n1 drift 5ppm"),
	rec(5, "actor.pause", "w0", ""),
	rec(9, "actor.resume", "w0", "held=1"),
	rec(10, "kv.apply", "", "call=9 rev=2->3"),
	rec(10, "violation", "", "C.ZombieRejection: accepted (by #7 w0.0 claim)"),
	rec(11, "kv.return", "w0", "after the violation"),
}

func TestLanesPairFaultsAndFindTheCulprit(t *testing.T) {
	names, marks := lanes(story, culpritsOf("accepted (by #7 w0.0 claim)"))
	if got := strings.Join(names, ","); got != "w0,n1,world" {
		t.Fatalf("lanes %s, want w0,n1,world (the clock fault on its victim n1; apply is bookkeeping)", got)
	}
	var pause, claim, clock *mark
	for i := range marks {
		switch marks[i].Kind {
		case "actor.pause":
			pause = &marks[i]
		case "coord.claim":
			claim = &marks[i]
		case "nemesis.clock":
			clock = &marks[i]
		}
	}
	if pause == nil || pause.Until != 9 || pause.Cat != timeline.Fault {
		t.Fatalf("pause mark %+v: want a fault lasting until its resume at 9", pause)
	}
	if claim == nil || !claim.Culprit {
		t.Fatalf("claim mark %+v: the violation names #7", claim)
	}
	if clock == nil || names[clock.Lane] != "n1" {
		t.Fatal("the nemesis's clock fault belongs on n1's lane")
	}
	apply := 0
	for _, m := range marks {
		if m.Kind == "kv.apply" {
			apply++
			if !m.Culprit || m.At != 10 {
				t.Fatalf("apply mark %+v: only the violating step's apply is drawn, highlighted", m)
			}
		}
	}
	if apply != 1 {
		t.Fatalf("%d apply marks drawn, want the violating step's one", apply)
	}
}

func TestWriteEscapesAndStaysOffline(t *testing.T) {
	records := append([]simclock.Record{rec(0, "kv.send", "w0", `call=1 put("<script>alert(1)</script>")`)}, story...)
	var b strings.Builder
	err := Write(&b, Page{Scenario: "coord", Verdict: "violation", Property: "C.ZombieRejection",
		Detail: "accepted (by #7 w0.0 claim)", Records: records})
	if err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if strings.Contains(html, "<script>alert") {
		t.Fatal("a trace detail reached the page unescaped")
	}
	for _, want := range []string{`id="violation-line"`, `id="violation-row"`, `class="answer culprit"`, "C.ZombieRejection"} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	table := html[strings.Index(html, `<table class="tail">`):]
	table = table[:strings.Index(table, "</table>")]
	if strings.Contains(table, "after the violation") || !strings.Contains(table, "violation-row") {
		t.Error("the last-records table runs past the violation")
	}
	for _, remote := range []string{`src="http`, `href="http`, "@import"} {
		if strings.Contains(html, remote) {
			t.Errorf("page loads %q", remote)
		}
	}
}
