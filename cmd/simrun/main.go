// Command simrun runs shardsim scenarios: one run from a seed or a choice
// file, a sweep over a seed range, or a listing of what can be run.
//
//	simrun run    -scenario NAME [-seed N | -choices FILE] [-bug NAME]... [-opt K=V]... [-trace FILE.jsonl] [-viz FILE.html] [-json]
//	simrun sweep  -scenario NAME -seeds A-B [-parallel N] [-bug NAME]... [-opt K=V]... [-corpus DIR] [-shrink] [-json]
//	simrun list   [-json]
//	simrun replay FILE.json [-json]
//	simrun shrink -in FILE -out FILE [-property P] [-max-replays N] [-force] [-json]
//
// Exit status: 0 every property held; 1 a property was violated; 2 bad usage
// or bad input (with a one-line error); 3 a check could not decide (for
// example porcupine ran out of time), which is never reported as a pass.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// Exit statuses of the CLI contract.
const (
	exitOK        = 0
	exitViolation = 1
	exitUsage     = 2
	exitUnknown   = 3
)

func main() {
	tuneGC()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// gcPercent is simrun's garbage-collection target unless GOGC says
// otherwise. A world's live heap is a few megabytes and lives for
// milliseconds, so at Go's default (100) a sweep spends a third of its time
// collecting worlds that are about to die anyway; at 400 a sweep of coord
// runs in about two thirds of the CPU time for some tens of megabytes more.
const gcPercent = 400

func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}

// usageError is bad usage or bad input: one line on stderr, exit 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

const usage = `usage:
  simrun run    -scenario NAME [-seed N | -choices FILE] [-bug NAME]... [-opt K=V]... [-trace FILE.jsonl] [-viz FILE.html] [-json]
  simrun sweep  -scenario NAME -seeds A-B [-parallel N] [-bug NAME]... [-opt K=V]... [-corpus DIR] [-shrink] [-json]
  simrun list   [-json]
  simrun replay FILE.json [-json]                 replay a corpus entry; exit 1 if it differs from its record
  simrun shrink -in FILE -out FILE [-scenario NAME -bug NAME... -opt K=V...] [-property P] [-max-replays N] [-force] [-json]
                                                  minimise a failing run (corpus entry or choices file) to a corpus entry`

// run is main without the process: it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "simrun: missing command (run, sweep, list, replay or shrink; simrun help shows the usage)")
		return exitUsage
	}
	var code int
	var err error
	switch args[0] {
	case "run":
		code, err = cmdRun(args[1:], stdout)
	case "sweep":
		code, err = cmdSweep(args[1:], stdout, stderr)
	case "list":
		code, err = cmdList(args[1:], stdout)
	case "replay":
		code, err = cmdReplay(args[1:], stdout)
	case "shrink":
		code, err = cmdShrink(args[1:], stdout)
	case "help", "-h", "-help", "--help":
		fmt.Fprintln(stdout, usage)
		return exitOK
	default:
		err = usagef("unknown command %q (want run, sweep, list, replay or shrink)", args[0])
	}
	if err != nil {
		fmt.Fprintf(stderr, "simrun: %v\n", err)
		return exitUsage
	}
	return code
}
