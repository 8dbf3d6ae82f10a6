package scenarios

import (
	"testing"

	"shardsim/nemesis"
)

// Every scenario describes its options; options drawn only behind another
// option are found and marked.
func TestOptionsDescribeEveryScenario(t *testing.T) {
	for _, s := range All() {
		opts, err := Options(s.Name)
		if err != nil || len(opts) == 0 {
			t.Fatalf("%s: %v, %d options", s.Name, err, len(opts))
		}
		seen := map[string]bool{}
		for _, o := range opts {
			if seen[o.Name] {
				t.Fatalf("%s lists %s twice", s.Name, o.Name)
			}
			seen[o.Name] = true
		}
	}
	opts, _ := Options("coord")
	for _, o := range opts {
		if o.Name == "cooldown_units" && !o.Sometimes {
			t.Fatal("cooldown_units is drawn only with cooldown=true, yet not marked")
		}
		if o.Name == "workers" && (o.Sometimes || o.Min != "1") {
			t.Fatalf("workers: %+v", o)
		}
	}
}

func TestMergeSpecsKeepsDrawOrder(t *testing.T) {
	a := []nemesis.OptionSpec{{Name: "x"}, {Name: "z"}}
	b := []nemesis.OptionSpec{{Name: "x"}, {Name: "y"}, {Name: "z"}}
	got := mergeSpecs([][]nemesis.OptionSpec{a, b})
	if len(got) != 3 || got[0].Name != "x" || got[1].Name != "y" || got[2].Name != "z" || !got[1].Sometimes || got[0].Sometimes {
		t.Fatalf("%+v", got)
	}
}
