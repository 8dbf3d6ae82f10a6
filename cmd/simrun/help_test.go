package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"strings"
	"testing"
)

// Every command's usage is printed by `simrun help CMD`, `CMD -h` and
// `CMD -help` alike, on stdout with exit 0, and names every flag with its
// default.
func TestEveryCommandHasHelp(t *testing.T) {
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			// The command's own flag set, to know what the page must list.
			_, err := c.run(&env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, getenv: os.Getenv}, []string{"-h"})
			var help helpRequested
			if !errors.As(err, &help) {
				t.Fatalf("%s -h: %v, want a help request", c.name, err)
			}
			var pages []string
			for _, args := range [][]string{{"help", c.name}, {c.name, "-h"}, {c.name, "-help"}, {c.name, "--help"}} {
				code, out, stderr := simrun(t, args...)
				if code != 0 || stderr != "" {
					t.Fatalf("simrun %s: exit %d stderr %q", strings.Join(args, " "), code, stderr)
				}
				pages = append(pages, out)
			}
			for _, p := range pages[1:] {
				if p != pages[0] {
					t.Fatalf("help pages differ:\n%s\n---\n%s", pages[0], p)
				}
			}
			page := pages[0]
			if !strings.HasPrefix(page, "usage: simrun "+c.name) || !strings.Contains(page, "exit status:") {
				t.Fatalf("page lacks the usage line or the exit statuses:\n%s", page)
			}
			help.flags.VisitAll(func(f *flag.Flag) {
				line := ""
				for _, l := range strings.Split(page, "\n") {
					if strings.HasPrefix(strings.TrimSpace(l), "-"+f.Name+" ") || strings.TrimSpace(l) == "-"+f.Name {
						line = l
					}
				}
				if line == "" || !strings.Contains(line, "(default: ") {
					t.Errorf("flag -%s is not listed with its default:\n%s", f.Name, page)
				}
			})
		})
	}
}

func TestHelpListsCommands(t *testing.T) {
	code, out, _ := simrun(t, "help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, c := range commands {
		if !strings.Contains(out, "  "+c.name+" ") {
			t.Errorf("simrun help does not list %s:\n%s", c.name, out)
		}
	}
	for _, arg := range []string{"-h", "-help", "--help"} {
		if code, again, _ := simrun(t, arg); code != 0 || again != out {
			t.Errorf("simrun %s: exit %d, page differs", arg, code)
		}
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := simrun(t, "version")
	if code != 0 || !strings.HasPrefix(out, "simrun shardsim ") || !strings.Contains(out, "revision ") {
		t.Fatalf("exit %d: %q", code, out)
	}
	code, out, _ = simrun(t, "version", "-json")
	v := decodeOne[buildVersion](t, out)
	if code != 0 || v.Module != "shardsim" || v.Revision == "" || v.Go == "" {
		t.Fatalf("exit %d: %+v", code, v)
	}
}

// simrun list shows each scenario's -opt options with their ranges.
func TestListShowsOptionRanges(t *testing.T) {
	code, out, _ := simrun(t, "list")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		"clients                int      drawn 2..5, -opt between 1 and 5000",
		"partition              rate     drawn 0.02..0.2, -opt a probability between 0 and 1",
		"verification           enum     drawn 0..2, -opt between 0 and 2",
		"cooldown_units         int      drawn 1..5, -opt between 1 and 5000 (sometimes)",
		"leases                 flag     true or false",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q", want)
		}
	}
	code, out, _ = simrun(t, "list", "-json")
	got := decodeOne[listJSON](t, out)
	if code != 0 || len(got.Scenarios) == 0 {
		t.Fatalf("exit %d", code)
	}
	for _, s := range got.Scenarios {
		if len(s.Options) == 0 {
			t.Errorf("scenario %s lists no options", s.Name)
		}
	}
}
