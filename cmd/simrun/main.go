// Command simrun runs shardsim scenarios: one run from a seed or a choice
// file, a sweep over a seed range (on one machine or sharded across a batch
// engine's tasks), the replay of saved runs, and the triage of what sweeps
// found. `simrun help` lists the commands; `simrun help CMD` (or
// `simrun CMD -h`) prints one command's usage with every flag and its
// default.
//
// Exit status: 0 every property held; 1 a property was violated; 2 bad usage
// or bad input (with a one-line error); 3 a check could not decide (for
// example porcupine ran out of time), which is never reported as a pass;
// 4 (replay) a saved run no longer reproduces its record; 130 and 143 a
// sweep stopped by SIGINT or SIGTERM before it covered its seeds and found
// no violation (one that found a violation exits 1).
//
// Environment: unless GOGC or GOMEMLIMIT is set, simrun runs the garbage
// collector at GOGC=400 with a soft memory limit of 2 GiB (see tuneGC).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// Exit statuses of the CLI contract, and simrun's additions.
const (
	exitOK        = 0
	exitViolation = 1
	exitUsage     = 2
	exitUnknown   = 3
	exitDiffers   = 4   // replay: the run no longer matches its record
	exitSIGINT    = 130 // a sweep interrupted by SIGINT (128 + 2), nothing violated
	exitSIGTERM   = 143 // a sweep stopped by SIGTERM (128 + 15), nothing violated
)

func main() {
	tuneGC(os.Getenv)
	os.Exit(runEnv(os.Args[1:], &env{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}))
}

// gcPercent is simrun's garbage-collection target unless GOGC says
// otherwise. A world's live heap is a few megabytes and lives for
// milliseconds, so at Go's default (100) a sweep spends a third of its time
// collecting worlds that are about to die anyway; at 400 a sweep of coord
// runs in about two thirds of the CPU time for some tens of megabytes more.
// Higher targets buy little more: migrate seeds 1-300 took 0.92 to 0.97 CPU
// seconds at 800 and 1600 against 0.96 to 0.97 at 400, for a peak resident
// set of 44 and 77 MB against 28 MB.
const gcPercent = 400

// memoryLimit is the soft limit simrun sets on the Go heap unless
// GOMEMLIMIT says otherwise. At gcPercent the heap may grow to five times
// what is live, which costs nothing for worlds of a few megabytes but would
// take a big run (large -opt values, many parallel worlds) far past its
// needs; near the limit the collector runs as often as it must instead.
// Check sets its own limit as its tables grow (see heapLimiter), which
// replaces this one.
const memoryLimit = 2 << 30

// tuneGC applies gcPercent and memoryLimit where the environment (getenv)
// leaves them to simrun: an explicit GOGC or GOMEMLIMIT, which the runtime
// has already applied, always wins.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
}

// env is what a command may touch of its process: its output streams and
// its environment (batch engines pass a sweep's shard there). Tests give
// their own.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// stderrTTY says whether stderr is a terminal (progress lines); nil
	// asks the process's stderr.
	stderrTTY func() bool
}

func (e *env) isTerminal() bool {
	if e.stderrTTY != nil {
		return e.stderrTTY()
	}
	return stderrIsTerminal()
}

// usageError is bad usage or bad input: one line on stderr, exit 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// run is main without the process, for tests: the process's environment,
// the given streams.
func run(args []string, stdout, stderr io.Writer) int {
	return runEnv(args, &env{stdout: stdout, stderr: stderr, getenv: os.Getenv, stderrTTY: func() bool { return false }})
}

// runEnv dispatches one command and returns the exit status.
func runEnv(args []string, e *env) int {
	if len(args) == 0 {
		fmt.Fprintf(e.stderr, "simrun: missing command (%s; simrun help shows the usage)\n", commandNames())
		return exitUsage
	}
	name := args[0]
	var code int
	var err error
	switch name {
	case "help", "-h", "-help", "--help":
		code, err = cmdHelp(args[1:], e)
	default:
		c, ok := lookupCommand(name)
		if !ok {
			err = usagef("unknown command %q (want %s)", name, commandNames())
			break
		}
		code, err = c.run(e, args[1:])
	}
	var help helpRequested
	if errors.As(err, &help) {
		printCommandHelp(e.stdout, help.cmd, help.flags)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "simrun: %v\n", err)
		return exitUsage
	}
	return code
}
