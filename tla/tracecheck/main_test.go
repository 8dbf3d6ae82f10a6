package main

import "testing"

func TestJudge(t *testing.T) {
	var ok result
	judge(&ok, "Error: Invariant NotDone is violated.\nError: The behavior up to this point is:\n", false)
	if !ok.validated || ok.problem != "" {
		t.Errorf("a trace TLC followed to its end: %+v", ok)
	}
	done := "Model checking completed. No error has been found.\n27 states generated, 27 distinct states found, 0 states left on queue.\nThe depth of the complete state graph search is 27.\n"
	for _, byDepth := range []bool{false, true} {
		stuck := result{events: 40}
		judge(&stuck, done, byDepth)
		if stuck.validated || stuck.reached != 26 {
			t.Errorf("byDepth %v: a trace TLC could not follow past event 27: %+v", byDepth, stuck)
		}
	}
	whole := result{events: 26}
	judge(&whole, done, true)
	if !whole.validated || whole.reached != 26 {
		t.Errorf("byDepth: a search as deep as the trace is long: %+v", whole)
	}
	whole = result{events: 26}
	judge(&whole, done, false)
	if whole.validated {
		t.Errorf("without byDepth only NotDone's violation validates: %+v", whole)
	}
	var broken result
	judge(&broken, "Error: Parsing or semantic analysis failed.\n", true)
	if broken.problem == "" {
		t.Errorf("a TLC error was not reported: %+v", broken)
	}
}

func TestSeedRange(t *testing.T) {
	if a, b, err := seedRange("3-7"); err != nil || a != 3 || b != 7 {
		t.Errorf("3-7: %d %d %v", a, b, err)
	}
	if a, b, err := seedRange("9"); err != nil || a != 9 || b != 9 {
		t.Errorf("9: %d %d %v", a, b, err)
	}
	for _, bad := range []string{"", "x", "7-3", "1-"} {
		if _, _, err := seedRange(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestEventAt(t *testing.T) {
	data := []byte("Trace == <<\n  [act |-> \"tick\", n |-> 2],\n  [act |-> \"stutter\"]\n>>\n")
	if got := eventAt(data, 1); got != `[act |-> "stutter"]`+"\n>>\n" {
		t.Errorf("event 1 = %q", got)
	}
	if got := eventAt(data, 5); got != "(past the end)" {
		t.Errorf("event 5 = %q", got)
	}
}
