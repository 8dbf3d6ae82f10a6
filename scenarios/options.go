package scenarios

import (
	"errors"
	"slices"

	"shardsim/nemesis"
)

// errDescribed stops a run right after its options were drawn, when all its
// caller wants is their description (Options).
var errDescribed = errors.New("scenarios: options described")

// optionRuns is how many seeded draws Options looks at besides the quiet
// stream: enough that every option drawn only behind another option's flag
// shows up (each such flag is on with a probability of at least 0.3).
const optionRuns = 48

// Options describes the options scenario name draws, in draw order: each
// one's kind, the range runs draw it from and the values an -opt override
// may give it. Options drawn only in some runs (behind another option) are
// marked Sometimes. Nothing but the option draws runs.
func Options(name string) ([]nemesis.OptionSpec, error) {
	s, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	var runs [][]nemesis.OptionSpec
	for i := 0; i <= optionRuns; i++ {
		var got []nemesis.OptionSpec
		cfg := Config{Seed: uint64(i), describe: &got}
		if i == 0 {
			cfg.Choices = []byte{} // the quiet run
		}
		if _, err := s.Run(cfg); err != nil && !errors.Is(err, errDescribed) {
			return nil, err
		}
		runs = append(runs, got)
	}
	return mergeSpecs(runs), nil
}

// mergeSpecs unions the options of several runs, keeping the draw order: an
// option first seen in a later run goes right after its predecessor there.
func mergeSpecs(runs [][]nemesis.OptionSpec) []nemesis.OptionSpec {
	var out []nemesis.OptionSpec
	seen := map[string]int{} // name -> runs it appeared in
	index := func(name string) int {
		return slices.IndexFunc(out, func(o nemesis.OptionSpec) bool { return o.Name == name })
	}
	for _, run := range runs {
		prev := -1
		for _, spec := range run {
			seen[spec.Name]++
			i := index(spec.Name)
			if i < 0 {
				i = prev + 1
				out = slices.Insert(out, i, spec)
			}
			prev = i
		}
	}
	for i := range out {
		out[i].Sometimes = seen[out[i].Name] < len(runs)
	}
	return out
}
