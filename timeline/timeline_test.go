package timeline

import (
	"strings"
	"testing"

	"shardsim/simclock"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		kind, detail string
		want         Category
	}{
		{"violation", "C.SplitAtomicity: ...", Violation},
		{"actor.crash", "", Fault},
		{"nemesis.clock", "n1 drift 5ppm", Fault},
		{"kv.send", "call=3 fate=lost-request in=1ms put(...)", Fault},
		{"kv.send", "call=4 fate=delivered in=1ms put(...)", Request},
		{"kv.return", "call=4 err=<nil>", Answer},
		{"coord.claim", "#3 w0.0 claim -> executed", Answer},
		{"op.invoke", "op=7 kind=read key=k03", Request},
		{"op.return", "op=7 kind=read ts=1000019.0 found", Answer},
		{"actor.restart", "incarnation=1", Heal},
		{"kv.heal-all", "", Heal},
		{"mig.phase", "j1 PLANNED->BACKFILL", Step},
		{"kv.apply", "call=4 rev=1->2", Other},
		{"actor.spawn", "", Other},
	}
	for _, c := range cases {
		if got := Classify(simclock.Record{Kind: c.kind, Detail: c.detail}); got != c.want {
			t.Errorf("Classify(%s %q) = %s, want %s", c.kind, c.detail, got, c.want)
		}
	}
}

// The collector decodes a JSON-lines trace however the writes split it,
// and counts its faults.
func TestCollectorDecodesSplitLines(t *testing.T) {
	var want []simclock.Record
	tr := simclock.NewTrace(1)
	var sb strings.Builder
	tr.WriteJSON(&sb)
	for i, k := range []string{"kv.send", "actor.crash", "kv.answer-lost", "kv.return"} {
		tr.Add(simclock.Time(i*10), k, "a", "call=1 fate=delivered")
		want = append(want, simclock.Record{Seq: uint64(i + 1), At: simclock.Time(i * 10), Kind: k, Actor: "a", Detail: "call=1 fate=delivered"})
	}
	text := sb.String()
	var c Collector
	for i := 0; i < len(text); i += 7 { // awkward chunks, splitting lines
		c.Write([]byte(text[i:min(i+7, len(text))]))
	}
	if c.Err() != nil || len(c.Records()) != len(want) {
		t.Fatalf("decoded %d records (err %v), want %d", len(c.Records()), c.Err(), len(want))
	}
	for i := range want {
		if c.Records()[i] != want[i] {
			t.Fatalf("record %d = %+v, want %+v", i, c.Records()[i], want[i])
		}
	}
	if n := Faults(c.Records()); n != 2 {
		t.Fatalf("Faults = %d, want 2 (a crash, a lost answer)", n)
	}
	var bad Collector
	bad.Write([]byte("{not json}\n"))
	if bad.Err() == nil {
		t.Fatal("a garbled line must be reported")
	}
}
