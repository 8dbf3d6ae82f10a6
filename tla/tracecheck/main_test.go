package main

import (
	"strconv"
	"strings"
	"testing"
)

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

func TestCombine(t *testing.T) {
	mod := func(keys, ts int, events string) []byte {
		return []byte("---- MODULE MigTrace ----\nEXTENDS Integers, Sequences, TLC\nTraceKeys == 1.." + strconv.Itoa(keys) +
			"\nTraceMaxTS == " + strconv.Itoa(ts) + "\nTrace == <<\n" + events + "\n>>\nTraces == <<Trace>>\n====\n")
	}
	out, err := combine("MigTrace", []runTrace{
		{r: result{seed: 1}, module: mod(3, 7, `  [act |-> "write"],`+"\n"+`  [act |-> "job"]`)},
		{r: result{seed: 2}, module: mod(5, 4, `  [act |-> "import"]`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"---- MODULE MigTrace ----", "TraceKeys == 1..5\n", "TraceMaxTS == 7\n",
		"Trace1 == <<\n  [act |-> \"write\"],\n  [act |-> \"job\"]\n>>\n", "Trace2 == <<\n  [act |-> \"import\"]\n>>\n",
		"Traces == <<Trace1, Trace2>>\n====\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("combined module lacks %q:\n%s", want, out)
		}
	}
	if _, err := combine("MigTrace", []runTrace{{module: []byte("not a trace")}}); err == nil {
		t.Error("a module without a trace was combined")
	}
}
