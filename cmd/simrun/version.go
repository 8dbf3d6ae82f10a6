package main

import (
	"fmt"
	"runtime/debug"
)

// linkRevision is the VCS revision `make simrun` links in (-ldflags -X),
// for builds that carry no VCS stamp of their own: a git worktree, or
// GOFLAGS=-buildvcs=false.
var linkRevision string

// buildVersion is what `simrun version` prints and trace headers record.
type buildVersion struct {
	Module   string `json:"module"`
	Version  string `json:"version"`            // the module version ("(devel)" when built from a checkout)
	Revision string `json:"revision,omitempty"` // the VCS revision, "+dirty" appended when the tree had changes
	Time     string `json:"time,omitempty"`     // the revision's commit time
	Go       string `json:"go"`
}

// readVersion reads the build information the Go toolchain embedded. A
// binary built by `go build` inside the checkout carries the VCS revision;
// `go run` and `go test` binaries do not, and say "unknown".
func readVersion() buildVersion {
	v := buildVersion{Module: "shardsim", Version: "unknown", Revision: "unknown"}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		if linkRevision != "" {
			v.Revision = linkRevision
		}
		return v
	}
	v.Module, v.Version, v.Go = info.Main.Path, info.Main.Version, info.GoVersion
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty {
		v.Revision += "+dirty"
	}
	if v.Revision == "unknown" && linkRevision != "" {
		v.Revision = linkRevision
	}
	return v
}

func (v buildVersion) String() string {
	s := fmt.Sprintf("%s %s revision %s", v.Module, v.Version, v.Revision)
	if v.Time != "" {
		s += " (" + v.Time + ")"
	}
	return s + " " + v.Go
}

func cmdVersion(e *env, args []string) (int, error) {
	fs := newFlagSet("version")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return 0, err
	}
	v := readVersion()
	if *asJSON {
		writeJSON(e.stdout, v)
		return exitOK, nil
	}
	fmt.Fprintln(e.stdout, "simrun", v)
	return exitOK, nil
}
