// Package corpus stores failing (and interesting) runs so they replay forever:
// one JSON file per run under corpus/<scenario>/<name>.json naming the
// scenario, the seed or the base64 choice bytes, the options, the bugs, the
// expected verdict and property, and the trace digest. `go test ./corpus/...`
// replays every file and requires the recorded verdict and digest.
package corpus

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"shardsim/model/bugs"
	"shardsim/property"
	"shardsim/scenarios"
)

// Entry is one saved run.
type Entry struct {
	Scenario string            `json:"scenario"`
	Seed     *uint64           `json:"seed,omitempty"`
	Choices  string            `json:"choices,omitempty"` // base64 (standard encoding)
	Options  map[string]string `json:"options,omitempty"`
	Bugs     []string          `json:"bugs,omitempty"`
	Verdict  string            `json:"verdict"`
	Property property.Name     `json:"property,omitempty"`
	Digest   string            `json:"digest"`
	Note     string            `json:"note,omitempty"`
}

// Decode parses and validates one corpus file. Unknown fields, trailing data,
// a missing or doubled run source, an unknown scenario or bug, a bad verdict
// or a malformed digest are all errors.
func Decode(data []byte) (Entry, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var e Entry
	if err := dec.Decode(&e); err != nil {
		return Entry{}, fmt.Errorf("corpus: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Entry{}, errors.New("corpus: trailing data after the entry")
	}
	if err := e.validate(); err != nil {
		return Entry{}, err
	}
	return e, nil
}

func (e Entry) validate() error {
	if _, err := scenarios.Lookup(e.Scenario); err != nil {
		return fmt.Errorf("corpus: %v", err)
	}
	if (e.Seed == nil) == (e.Choices == "") {
		return errors.New("corpus: exactly one of seed and choices must be set")
	}
	if e.Choices != "" {
		if _, err := base64.StdEncoding.DecodeString(e.Choices); err != nil {
			return fmt.Errorf("corpus: choices are not base64: %v", err)
		}
	}
	if _, err := bugs.Parse(e.Bugs...); err != nil {
		return fmt.Errorf("corpus: %v", err)
	}
	switch property.Verdict(e.Verdict) {
	case property.VerdictOK:
		if e.Property != "" {
			return errors.New("corpus: an ok verdict names no property")
		}
	case property.VerdictViolation:
		if !property.Known(e.Property) {
			return fmt.Errorf("corpus: a violation must name a catalog property, not %q", e.Property)
		}
	default:
		return fmt.Errorf("corpus: verdict %q is not ok or violation", e.Verdict)
	}
	if b, err := hex.DecodeString(e.Digest); err != nil || len(b) != 32 {
		return fmt.Errorf("corpus: digest %q is not 64 hex digits", e.Digest)
	}
	return nil
}

// Load reads and decodes one corpus file.
func Load(path string) (Entry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Entry{}, fmt.Errorf("corpus: %v", err)
	}
	e, err := Decode(data)
	if err != nil {
		return Entry{}, fmt.Errorf("%s: %v", path, err)
	}
	return e, nil
}

// Files lists every corpus file under dir, sorted.
func Files(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".json") {
			out = append(out, path)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// Config turns the entry into a run configuration.
func (e Entry) Config() (scenarios.Config, error) {
	set, err := bugs.Parse(e.Bugs...)
	if err != nil {
		return scenarios.Config{}, err
	}
	cfg := scenarios.Config{Bugs: set, Options: e.Options}
	if e.Seed != nil {
		cfg.Seed = *e.Seed
	} else {
		b, err := base64.StdEncoding.DecodeString(e.Choices)
		if err != nil {
			return scenarios.Config{}, err
		}
		cfg.Choices = b
	}
	return cfg, nil
}

// FromResult builds an entry from a run and the config that produced it.
func FromResult(cfg scenarios.Config, r scenarios.Result) Entry {
	e := Entry{
		Scenario: r.Scenario,
		Options:  cfg.Options,
		Bugs:     cfg.Bugs.Names(),
		Verdict:  string(r.Verdict),
		Property: r.Property,
		Digest:   r.Digest,
	}
	if cfg.Choices != nil {
		e.Choices = base64.StdEncoding.EncodeToString(cfg.Choices)
	} else {
		s := cfg.Seed
		e.Seed = &s
	}
	return e
}

// Encode renders an entry as indented JSON with a final newline.
func Encode(e Entry) ([]byte, error) {
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ErrExists is returned (wrapped) by Save when the entry's file exists.
var ErrExists = errors.New("exists, not overwritten")

// Save writes the entry under dir/<scenario>/<name>.json, creating folders.
// The name says what the run shows: the bug (or "clean"), the property and
// the seed or a digest prefix. It never overwrites a file: when the name is
// taken it returns the path and an error wrapping ErrExists.
func Save(dir string, e Entry) (string, error) {
	what := "clean"
	if len(e.Bugs) > 0 {
		what = strings.Join(e.Bugs, "+")
	}
	src := "bytes-" + e.Digest[:12]
	if e.Seed != nil {
		src = fmt.Sprintf("seed%d", *e.Seed)
	}
	name := what + "-" + src
	if e.Property != "" {
		name = what + "-" + string(e.Property) + "-" + src
	}
	path := filepath.Join(dir, e.Scenario, name+".json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	data, err := Encode(e)
	if err != nil {
		return "", err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return path, fmt.Errorf("%s: %w", path, ErrExists)
	}
	if err != nil {
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}
