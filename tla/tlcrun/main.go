// Command tlcrun model-checks every TLA+ configuration in a directory with
// TLC and checks each outcome against what the configuration expects.
//
// A configuration X.cfg or X_<anything>.cfg belongs to the module X.tla in
// the same directory (the longest module name that fits). A configuration
// without an EXPECT line is safe: TLC must finish without any violation. A
// gap configuration says, in TLA+ comments,
//
//	\* EXPECT: C_ZombieRejection
//	\* BASE: ShardCoordination.cfg
//
// and TLC must stop with exactly that invariant, action property or (the
// only PROPERTY of the configuration) temporal property violated. When a
// gap configuration names a BASE, every constant but Bugs must equal the
// base's, so the bug switched on is the only difference from a
// configuration that passes.
//
// Adding a specification is adding files: Spec.tla, Spec.cfg and
// Spec_gap_<bug>.cfg. The jar comes from -jar, else $TLA2TOOLS, else
// ../shared/tools/tla2tools.jar. The table printed at the end gives, per
// configuration, states generated and distinct, depth and wall seconds.
//
// Exit status: 0 every outcome as expected, 1 some outcome not, 2 bad usage.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command-line settings.
type options struct {
	dir     string
	jar     string
	java    string
	workers string
	only    *regexp.Regexp
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("tlcrun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var only string
	def := os.Getenv("TLA2TOOLS")
	if def == "" {
		def = filepath.Join("..", "shared", "tools", "tla2tools.jar")
	}
	fs.StringVar(&o.dir, "dir", "tla", "directory of the .tla modules and .cfg configurations")
	fs.StringVar(&o.jar, "jar", def, "path of tla2tools.jar (default $TLA2TOOLS, else ../shared/tools/tla2tools.jar)")
	fs.StringVar(&o.java, "java", "java", "the java command")
	fs.StringVar(&o.workers, "workers", "auto", "TLC -workers")
	fs.StringVar(&only, "run", "", "only configurations whose file name matches this regexp")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	re, err := regexp.Compile(only)
	if err != nil {
		return o, fmt.Errorf("bad -run: %v", err)
	}
	o.only = re
	if _, err := os.Stat(o.jar); err != nil {
		return o, fmt.Errorf("no TLA+ tools jar at %s (set TLA2TOOLS or -jar; see tla/README.md)", o.jar)
	}
	// TLC runs in the configurations' directory.
	o.jar, err = filepath.Abs(o.jar)
	return o, err
}

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if err != flag.ErrHelp {
			fmt.Fprintln(stderr, "tlcrun:", err)
		}
		return 2
	}
	cfgs, err := discover(o.dir, o.only)
	if err != nil {
		fmt.Fprintln(stderr, "tlcrun:", err)
		return 2
	}
	bad := 0
	var rows []row
	for _, c := range cfgs {
		r := checkOne(o, c)
		if !r.ok {
			bad++
		}
		fmt.Fprintln(stdout, r.line())
		rows = append(rows, r)
	}
	fmt.Fprintln(stdout)
	printTable(stdout, rows)
	if bad > 0 {
		fmt.Fprintf(stdout, "tlcrun: %d of %d configurations did not end as expected\n", bad, len(rows))
		return 1
	}
	fmt.Fprintf(stdout, "tlcrun: all %d configurations ended as expected\n", len(rows))
	return 0
}

// discover lists the configurations of dir (sorted) with their modules.
func discover(dir string, only *regexp.Regexp) ([]config, error) {
	mods, err := filepath.Glob(filepath.Join(dir, "*.tla"))
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(mods))
	for _, m := range mods {
		names = append(names, strings.TrimSuffix(filepath.Base(m), ".tla"))
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.cfg"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []config
	for _, f := range files {
		if !only.MatchString(filepath.Base(f)) {
			continue
		}
		c, err := readConfig(f, names)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no configuration in %s matches", dir)
	}
	return out, nil
}

// checkOne runs TLC on c and judges the outcome.
func checkOne(o options, c config) row {
	r := row{cfg: c}
	if c.base != "" {
		if err := checkBase(c); err != nil {
			r.problem = err.Error()
			return r
		}
	}
	meta, err := os.MkdirTemp("", "tlcrun-")
	if err != nil {
		r.problem = err.Error()
		return r
	}
	defer os.RemoveAll(meta)
	start := time.Now()
	out := runTLC(o, c, meta)
	r.seconds = time.Since(start).Seconds()
	r.result = parseOutput(out, c)
	r.judge()
	return r
}
