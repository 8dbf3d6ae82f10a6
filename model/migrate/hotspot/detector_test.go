package hotspot

import (
	"testing"
	"time"

	"shardsim/model/migrate/keys"
	"shardsim/simclock"
)

func cfg() Config {
	return Config{Window: time.Second, Threshold: 100, WriteWeight: 4, ReadWeight: 1, Consecutive: 3,
		Cooldown: 10 * time.Second, HotKeyShare: 0.8, MinSamples: 10}
}

func load(reads, writes int, samples ...KeyCount) Load {
	return Load{RouteID: 2, Span: keys.Span{Start: "k"}, Reads: reads, Writes: writes, Samples: samples, Splittable: true}
}

func at(s int) simclock.Time { return simclock.Time(time.Duration(s) * time.Second) }

func TestHysteresisAndCooldown(t *testing.T) {
	d := New(cfg())
	hot := load(10, 30, KeyCount{"k1", 10}, KeyCount{"k3", 10}, KeyCount{"k5", 10})
	cold := load(10, 10)
	if d.Score(hot) != 130 || d.Score(cold) != 50 {
		t.Fatal("score weights")
	}
	seq := []Load{hot, hot, cold, hot, hot}
	for i, l := range seq {
		if got := d.Observe(at(i), []Load{l}); len(got) != 0 {
			t.Fatalf("window %d: decided %+v before three hot windows in a row", i, got)
		}
	}
	got := d.Observe(at(5), []Load{hot})
	if len(got) != 1 || got[0].SplitKey != "k3" || got[0].Isolate {
		t.Fatalf("third hot window: %+v", got)
	}
	d.Split(at(5), 2)
	for i := 6; i < 15; i++ {
		if got := d.Observe(at(i), []Load{hot}); len(got) != 0 {
			t.Fatalf("decided during the cooldown at %d: %+v", i, got)
		}
	}
	if got := d.Observe(at(16), []Load{hot}); len(got) != 1 {
		t.Fatal("no decision after the cooldown")
	}
}

func TestSplitKeyChoice(t *testing.T) {
	cases := []struct {
		name    string
		samples []KeyCount
		key     string
		isolate bool
	}{
		{"median", []KeyCount{{"k1", 3}, {"k2", 3}, {"k4", 3}, {"k6", 3}}, "k2", false},
		{"median skips the start", []KeyCount{{"k", 9}, {"k7", 3}}, "k7", false},
		{"hot key isolated at it", []KeyCount{{"k4", 90}, {"k6", 10}}, "k4", true},
		{"hot start key isolated above it", []KeyCount{{"k", 95}, {"k6", 5}}, keys.KeyAfter("k"), true},
		{"no evidence", []KeyCount{{"k4", 5}}, "", false},
	}
	for _, c := range cases {
		d := New(cfg())
		var got []Decision
		for i := 0; i < 3; i++ {
			got = d.Observe(at(i), []Load{load(0, 40, c.samples...)})
		}
		if len(got) != 1 || got[0].SplitKey != c.key || got[0].Isolate != c.isolate {
			t.Errorf("%s: %+v", c.name, got)
		}
		if c.key == "" && got[0].Reason == "" {
			t.Errorf("%s: a decline needs a reason", c.name)
		}
	}
}

func TestUnsplittableRoutesWait(t *testing.T) {
	d := New(cfg())
	l := load(0, 40, KeyCount{"k1", 10}, KeyCount{"k2", 10})
	l.Splittable = false
	for i := 0; i < 5; i++ {
		if got := d.Observe(at(i), []Load{l}); len(got) != 0 {
			t.Fatalf("decided on an unsplittable route: %+v", got)
		}
	}
	l.Splittable = true
	if got := d.Observe(at(5), []Load{l}); len(got) != 1 {
		t.Fatal("the streak did not survive while the route was busy")
	}
	if DefaultConfig().Threshold != 50_000 || DefaultConfig().Cooldown != 10*time.Minute {
		t.Fatal("the design's defaults")
	}
}
