package main

import (
	"encoding/json"
	"fmt"
	"io"

	"shardsim/model/bugs"
	"shardsim/property"
	"shardsim/scenarios"
)

type listJSON struct {
	Scenarios  []scenarioJSON `json:"scenarios"`
	Bugs       []bugJSON      `json:"bugs"`
	Properties []propertyJSON `json:"properties"`
}

type scenarioJSON struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Properties  []property.Name `json:"properties"`
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

func cmdList(args []string, stdout io.Writer) (int, error) {
	fs := newFlagSet("list")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return 0, err
	}
	var out listJSON
	for _, s := range scenarios.All() {
		out.Scenarios = append(out.Scenarios, scenarioJSON{s.Name, s.Description, s.Properties})
	}
	for _, b := range bugs.All() {
		out.Bugs = append(out.Bugs, bugJSON{b.Name, b.Protocol, b.Description, b.Properties, b.Scenario, b.Budget})
	}
	for _, p := range property.Catalog() {
		out.Properties = append(out.Properties, propertyJSON{p.Name, p.Kind, p.Text})
	}
	if *asJSON {
		b, _ := json.Marshal(out)
		fmt.Fprintln(stdout, string(b))
		return exitOK, nil
	}
	fmt.Fprintln(stdout, "scenarios:")
	for _, s := range out.Scenarios {
		fmt.Fprintf(stdout, "  %-16s %s\n", s.Name, s.Description)
	}
	fmt.Fprintln(stdout, "bugs:")
	for _, b := range out.Bugs {
		fmt.Fprintf(stdout, "  %-36s [%s, caught by %v within %d seeds] %s\n", b.Name, b.Scenario, b.Properties, b.Budget, b.Description)
	}
	fmt.Fprintln(stdout, "properties:")
	for _, p := range out.Properties {
		fmt.Fprintf(stdout, "  %-28s %-8s %s\n", p.Name, p.Kind, p.Text)
	}
	return exitOK, nil
}
