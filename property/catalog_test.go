package property

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// propertiesDoc finds ../shared/design/PROPERTIES.md: the shared folder
// sits beside the repository (CI) or beside the worktrees' parent.
func propertiesDoc(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(dir, "shared", "design", "PROPERTIES.md")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("shared/design/PROPERTIES.md not found beside the repository or any parent")
		}
		dir = parent
	}
}

// docRows parses the property tables of PROPERTIES.md: name -> kind. A
// row naming several properties ("KV.WatchOrdered / WatchUnique") gives
// each, with the first one's prefix.
func docRows(t *testing.T, path string) map[Name]Kind {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kinds := map[string]Kind{"S": Safety, "L": Liveness, "H": Harness}
	rows := map[Name]Kind{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cells := strings.Split(sc.Text(), "|")
		if len(cells) < 5 || !strings.HasPrefix(sc.Text(), "|") {
			continue
		}
		names, kind := strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2])
		k, ok := kinds[kind]
		if !ok {
			continue // the header and separator rows
		}
		prefix := ""
		for i, n := range strings.Split(names, "/") {
			n = strings.TrimSpace(n)
			if i == 0 {
				prefix = n[:strings.Index(n, ".")+1]
			} else {
				n = prefix + n
			}
			rows[Name(n)] = k
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestCatalogMatchesDocument holds the catalog and PROPERTIES.md together
// both ways: every row of the document is in the catalog with its kind,
// and every catalog entry is in the document or is one of Extras.
func TestCatalogMatchesDocument(t *testing.T) {
	rows := docRows(t, propertiesDoc(t))
	if len(rows) < 40 {
		t.Fatalf("parsed only %d properties from the document: the table format changed?", len(rows))
	}
	for name, kind := range rows {
		e, ok := Lookup(name)
		switch {
		case !ok:
			t.Errorf("%s is in PROPERTIES.md but not in the catalog", name)
		case e.Kind != kind:
			t.Errorf("%s: catalog kind %s, PROPERTIES.md %s", name, e.Kind, kind)
		}
	}
	for _, e := range Catalog() {
		_, inDoc := rows[e.Name]
		extra := slices.Contains(Extras, e.Name)
		switch {
		case !inDoc && !extra:
			t.Errorf("%s is in the catalog but neither in PROPERTIES.md nor in Extras", e.Name)
		case inDoc && extra:
			t.Errorf("%s is listed in Extras but PROPERTIES.md has it", e.Name)
		}
	}
}

func TestCatalogEntriesAreWellFormed(t *testing.T) {
	all := Catalog()
	for i, e := range all {
		if i > 0 && all[i-1].Name >= e.Name {
			t.Fatalf("catalog not sorted or duplicated at %s", e.Name)
		}
		if e.Text == "" || !strings.Contains(string(e.Name), ".") {
			t.Errorf("%s: needs a system prefix and a statement", e.Name)
		}
		switch e.Kind {
		case Safety, Liveness, Harness:
		default:
			t.Errorf("%s: unknown kind %q", e.Name, e.Kind)
		}
	}
	if Known("C.MutualExclsion") || !Known(CMutualExclusion) {
		t.Fatal("Known disagrees with the catalog")
	}
}

func TestViolationHelpers(t *testing.T) {
	var f First
	f.Set(nil)
	if f.Err() != nil {
		t.Fatal("nil set a violation")
	}
	f.Failf(CCursorBounds, "cursor %q outside", "k9")
	f.Set(Violated(CIdempotency, "later"))
	v := f.Err()
	if v == nil || v.Property != CCursorBounds || v.Error() != `C.CursorBounds: cursor "k9" outside` {
		t.Fatalf("first violation = %v", v)
	}
	a := v.About(SubjectShard, "run:1/shard:2")
	if a.Subject.ID != "run:1/shard:2" || v.Subject.ID != "" {
		t.Fatal("About must copy, not modify")
	}
	if (*Violation)(nil).About(SubjectKey, "k") != nil {
		t.Fatal("About on nil must stay nil")
	}
}
