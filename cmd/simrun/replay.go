package main

import (
	"fmt"
	"io"
	"os"

	"shardsim/corpus"
)

// cmdReplay runs a saved corpus entry and says whether it reproduced: the
// same verdict, property and digest as recorded. A corrupt or unreadable
// entry is bad input (exit 2); a run that differs from its record exits 1
// whatever its verdict, since the replay failed.
func cmdReplay(args []string, stdout io.Writer) (int, error) {
	fs := newFlagSet("replay")
	asJSON := fs.Bool("json", false, "end with one JSON object describing the run")
	// Flags may come before or after the file.
	if err := fs.Parse(args); err != nil {
		return 0, usagef("replay: %v", err)
	}
	if fs.NArg() == 0 {
		return 0, usagef("replay: want exactly one corpus file")
	}
	path := fs.Arg(0)
	if err := fs.Parse(fs.Args()[1:]); err != nil {
		return 0, usagef("replay: %v", err)
	}
	if fs.NArg() != 0 {
		return 0, usagef("replay: want exactly one corpus file")
	}
	e, err := corpus.Load(path)
	if err != nil {
		return 0, usageError{err.Error()}
	}
	res, excerpt, err := corpus.Replay(e)
	if err != nil {
		return 0, usageError{err.Error()}
	}
	src := fmt.Sprintf("entry %s", path)
	printReport(stdout, res, src, "simrun replay "+path)
	same := string(res.Verdict) == e.Verdict && res.Property == e.Property && res.Digest == e.Digest
	want := e.Verdict
	if e.Property != "" {
		want += " " + string(e.Property)
	}
	if same {
		fmt.Fprintf(stdout, "record   reproduced: %s, digest %s\n", want, e.Digest)
	} else {
		fmt.Fprintf(stdout, "record   DIFFERS: recorded %s, digest %s\n", want, e.Digest)
		// The golden excerpt, when there is one, says where the run moved.
		if golden, err := os.ReadFile(corpus.ExcerptPath(path)); err == nil {
			if diff := corpus.ExcerptDiff(string(golden), excerpt); diff != "" {
				fmt.Fprintf(stdout, "trace    %s\n", diff)
			}
		}
	}
	if *asJSON {
		printRunJSON(stdout, res)
	}
	if !same {
		return exitViolation, nil
	}
	return exitCode(res.Verdict), nil
}
