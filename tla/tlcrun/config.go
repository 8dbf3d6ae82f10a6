package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// config is one .cfg file and what it expects.
type config struct {
	path   string
	name   string // file name
	module string // the .tla module it configures
	expect string // the property a gap configuration must violate ("" when safe)
	base   string // the safe configuration a gap configuration varies
	// constants maps each CONSTANT name to its value text.
	constants map[string]string
	// properties are the names after PROPERTY (temporal or action).
	properties []string
}

// readConfig parses path; modules are the module names present.
func readConfig(path string, modules []string) (config, error) {
	c := config{path: path, name: filepath.Base(path), constants: map[string]string{}}
	stem := strings.TrimSuffix(c.name, ".cfg")
	for _, m := range modules {
		if (stem == m || strings.HasPrefix(stem, m+"_")) && len(m) > len(c.module) {
			c.module = m
		}
	}
	if c.module == "" {
		return c, fmt.Errorf("%s: no module %s.tla (or a prefix of it before '_') beside it", c.name, stem)
	}
	f, err := os.Open(path)
	if err != nil {
		return c, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	inConstants := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, `\* EXPECT:`):
			c.expect = strings.TrimSpace(strings.TrimPrefix(line, `\* EXPECT:`))
		case strings.HasPrefix(line, `\* BASE:`):
			c.base = strings.TrimSpace(strings.TrimPrefix(line, `\* BASE:`))
		case line == "" || strings.HasPrefix(line, `\*`):
		case line == "CONSTANTS" || line == "CONSTANT":
			inConstants = true
		case inConstants && strings.Contains(line, "<-"):
			name, value, _ := strings.Cut(line, "<-")
			c.constants[strings.TrimSpace(name)] = "<- " + strings.TrimSpace(value)
		case inConstants && strings.Contains(line, "="):
			name, value, _ := strings.Cut(line, "=")
			c.constants[strings.TrimSpace(name)] = strings.TrimSpace(value)
		default:
			inConstants = false
			if rest, ok := strings.CutPrefix(line, "PROPERTY "); ok {
				c.properties = append(c.properties, strings.TrimSpace(rest))
			}
		}
	}
	if err := sc.Err(); err != nil {
		return c, err
	}
	if c.base != "" && c.expect == "" {
		return c, fmt.Errorf("%s: BASE without EXPECT", c.name)
	}
	return c, nil
}

// checkBase checks that gap configuration c differs from its base only in
// Bugs, and that it switches some bug on.
func checkBase(c config) error {
	b, err := readConfig(filepath.Join(filepath.Dir(c.path), c.base), []string{c.module})
	if err != nil {
		return err
	}
	if b.expect != "" {
		return fmt.Errorf("%s: base %s is itself a gap configuration", c.name, c.base)
	}
	if v := c.constants["Bugs"]; v == "" || v == "{}" {
		return fmt.Errorf("%s: a gap configuration must switch a bug on", c.name)
	}
	for k, v := range b.constants {
		if k != "Bugs" && c.constants[k] != v {
			return fmt.Errorf("%s: constant %s is %q, its base %s has %q", c.name, k, c.constants[k], c.base, v)
		}
	}
	for k := range c.constants {
		if _, ok := b.constants[k]; !ok {
			return fmt.Errorf("%s: constant %s is not in its base %s", c.name, k, c.base)
		}
	}
	return nil
}
