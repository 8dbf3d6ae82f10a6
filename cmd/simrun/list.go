package main

import (
	"fmt"
	"strings"

	"shardsim/model/bugs"
	"shardsim/nemesis"
	"shardsim/property"
	"shardsim/scenarios"
)

const aboutList = `Lists the scenarios (with every -opt option each one draws: its kind, the
range runs draw it from and the values an override may take), the registered
bugs (with the scenario and properties that catch them) and the properties of
the catalog.

An option marked "sometimes" is drawn only in runs where an earlier option
calls for it (cooldown_units only when cooldown=true, say). Sizes, counts and
durations accept up to 1000 times their drawn maximum (beyond the drawn range
simrun says before the run that it may be slow); modes and indices (enum) only
their drawn range; rates any probability from 0 to 1.`

type listJSON struct {
	Scenarios  []scenarioJSON `json:"scenarios"`
	Bugs       []bugJSON      `json:"bugs"`
	Properties []propertyJSON `json:"properties"`
}

type scenarioJSON struct {
	Name        string               `json:"name"`
	Description string               `json:"description"`
	Properties  []property.Name      `json:"properties"`
	Options     []nemesis.OptionSpec `json:"options"`
}

type bugJSON struct {
	Name        string          `json:"name"`
	Protocol    string          `json:"protocol"`
	Description string          `json:"description"`
	Properties  []property.Name `json:"properties"`
	Scenario    string          `json:"scenario"`
	Budget      int             `json:"budget"`
}

type propertyJSON struct {
	Name property.Name `json:"name"`
	Kind property.Kind `json:"kind"`
	Text string        `json:"text"`
}

func cmdList(e *env, args []string) (int, error) {
	fs := newFlagSet("list")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return 0, err
	}
	var out listJSON
	for _, s := range scenarios.All() {
		opts, err := scenarios.Options(s.Name)
		if err != nil {
			return 0, fmt.Errorf("list: scenario %s: %v", s.Name, err)
		}
		out.Scenarios = append(out.Scenarios, scenarioJSON{s.Name, s.Description, s.Properties, opts})
	}
	for _, b := range bugs.All() {
		out.Bugs = append(out.Bugs, bugJSON{b.Name, b.Protocol, b.Description, b.Properties, b.Scenario, b.Budget})
	}
	for _, p := range property.Catalog() {
		out.Properties = append(out.Properties, propertyJSON{p.Name, p.Kind, p.Text})
	}
	if *asJSON {
		writeJSON(e.stdout, out)
		return exitOK, nil
	}
	w := e.stdout
	fmt.Fprintln(w, "scenarios (options: name kind drawn-range, override range):")
	for _, s := range out.Scenarios {
		fmt.Fprintf(w, "  %-16s %s\n", s.Name, s.Description)
		for _, o := range s.Options {
			fmt.Fprintf(w, "      %s\n", fmtOption(o))
		}
	}
	fmt.Fprintln(w, "bugs:")
	for _, b := range out.Bugs {
		fmt.Fprintf(w, "  %-36s [%s, caught by %v within %d seeds] %s\n", b.Name, b.Scenario, b.Properties, b.Budget, b.Description)
	}
	fmt.Fprintln(w, "properties:")
	for _, p := range out.Properties {
		fmt.Fprintf(w, "  %-28s %-8s %s\n", p.Name, p.Kind, p.Text)
	}
	return exitOK, nil
}

// fmtOption renders one option spec on one line.
func fmtOption(o nemesis.OptionSpec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-22s %-8s", o.Name, o.Kind)
	if o.Kind == nemesis.KindFlag {
		b.WriteString(" true or false")
	} else {
		fmt.Fprintf(&b, " drawn %s..%s, -opt %s", o.Low, o.High, o.Accepts())
	}
	if o.Sometimes {
		b.WriteString(" (sometimes)")
	}
	return b.String()
}
