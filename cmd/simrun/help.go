package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// command is one simrun subcommand.
type command struct {
	name     string
	synopsis string // what follows "simrun NAME" in the usage line
	summary  string // one line for `simrun help`
	about    string // what `simrun help NAME` says before the flags
	run      func(e *env, args []string) (int, error)
}

// commands lists the subcommands in the order `simrun help` shows them.
// It is filled in init because cmdHelp and the commands refer back to it.
var commands []command

func init() {
	commands = []command{
		{"run", "-scenario NAME [-seed N | -choices FILE] [flags]", "one run of a scenario; prints its report and, unless it passed, the replay command",
			aboutRun, cmdRun},
		{"sweep", "-scenario NAME -seeds A-B [flags]", "many seeds in parallel, failures grouped and saved; shardable across batch engines",
			aboutSweep, cmdSweep},
		{"merge", "[-json] FILE...", "combine the JSON results of a sharded sweep into the one-machine summary",
			aboutMerge, cmdMerge},
		{"shrink", "-in FILE -out FILE [-scenario NAME -bug NAME... -opt K=V...] [flags]", "minimise a failing run (corpus entry or choices file) to a corpus entry",
			aboutShrink, cmdShrink},
		{"check", "-scenario NAME [-bounds small|medium] [-depth N] [-strategy bfs|iddfs] [flags]", "explore every choice stream within bounds, pruning states seen before",
			aboutCheck, cmdCheck},
		{"replay", "[-json] FILE.json", "replay a saved run (a corpus entry) and say whether it reproduced",
			aboutReplay, cmdReplay},
		{"report", "[-known DIR] [-json] DIR", "summarise the runs saved under DIR by property and bug signature, new or known",
			aboutReport, cmdReport},
		{"list", "[-json]", "scenarios with their options, bugs, properties",
			aboutList, cmdList},
		{"version", "[-json]", "simrun's module version and VCS revision",
			"Prints the module version, the VCS revision and time the binary was built from (with\n\"+dirty\" when the tree had uncommitted changes) and the Go version.", cmdVersion},
	}
}

func lookupCommand(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func commandNames() string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

// helpRequested is returned by a command asked for -h or -help: the
// dispatcher prints the command's usage on stdout and exits 0.
type helpRequested struct {
	cmd   string
	flags *flag.FlagSet
}

func (h helpRequested) Error() string { return "help requested" }

const exitStatuses = `exit status: 0 every property held, 1 a property was violated, 2 bad usage or
bad input (one line on stderr), 3 a check could not decide (never a pass),
4 a replayed run differs from its record, 130/143 a sweep interrupted by
SIGINT/SIGTERM that found no violation.`

const gcEnvironment = `environment: simrun runs Go's garbage collector at GOGC=400 with a soft
memory limit of GOMEMLIMIT=2GiB (worlds are small and die young); setting
either variable overrides simrun's value. check sets its own memory limit
from -max-memory as its tables grow.`

// cmdHelp prints the list of commands, or one command's usage.
func cmdHelp(args []string, e *env) (int, error) {
	if len(args) == 0 {
		fmt.Fprintln(e.stdout, "usage: simrun COMMAND [flags]   (simrun help COMMAND, or simrun COMMAND -h, for one command)")
		fmt.Fprintln(e.stdout, "\ncommands:")
		for _, c := range commands {
			fmt.Fprintf(e.stdout, "  %-8s %s\n", c.name, c.summary)
		}
		fmt.Fprintln(e.stdout, "  help     this list, or one command's usage: simrun help COMMAND")
		fmt.Fprintln(e.stdout, "\n"+exitStatuses)
		fmt.Fprintln(e.stdout, "\n"+gcEnvironment)
		return exitOK, nil
	}
	if len(args) > 1 {
		return 0, usagef("help: want one command name, got %d words", len(args))
	}
	c, ok := lookupCommand(args[0])
	if !ok {
		return 0, usagef("help: unknown command %q (want %s)", args[0], commandNames())
	}
	return c.run(e, []string{"-h"})
}

// printCommandHelp prints a command's usage line, what it does, and every
// flag with its default.
func printCommandHelp(w io.Writer, name string, fs *flag.FlagSet) {
	c, _ := lookupCommand(name)
	fmt.Fprintf(w, "usage: simrun %s %s\n\n%s\n", c.name, c.synopsis, c.about)
	if fs != nil {
		fmt.Fprintln(w, "\nflags:")
		fs.VisitAll(func(f *flag.Flag) {
			arg, text := flag.UnquoteUsage(f)
			head := "-" + f.Name
			if arg != "" {
				head += " " + arg
			}
			def := f.DefValue
			switch {
			case def == "" || def == "[]":
				def = "none"
			case arg == "string" || strings.ContainsAny(def, " \t"):
				def = fmt.Sprintf("%q", def)
			}
			if strings.Contains(text, "(default: ") {
				fmt.Fprintf(w, "  %-22s %s\n", head, text) // the usage says it better
				return
			}
			fmt.Fprintf(w, "  %-22s %s (default: %s)\n", head, text, def)
		})
	}
	fmt.Fprintln(w, "\n"+exitStatuses)
}

// newFlagSet returns a flag set that reports errors instead of exiting and
// prints nothing on its own.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parseFlags parses args and rejects stray positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := parseInterleaved(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

// parseInterleaved parses flags that may come before, between or after the
// positional arguments, which it leaves in fs.Args(). -h and -help anywhere
// ask for the command's usage.
func parseInterleaved(fs *flag.FlagSet, args []string) error {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return helpRequested{fs.Name(), fs}
			}
			return usagef("%s: %v", fs.Name(), err)
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	// Leave the positional arguments where fs.Args reports them.
	if err := fs.Parse(append([]string{"--"}, positional...)); err != nil {
		return usagef("%s: %v", fs.Name(), err)
	}
	return nil
}
