package reach

import (
	"strings"
	"testing"
)

func TestTableFindsWhatNoRunReached(t *testing.T) {
	Declare("test-group", Point{Name: "a"}, Point{Name: "b"}, Point{Name: "c"})
	var r1, r2 Counts
	r1.Hit("a")
	r1.Add("a", 2)
	r2.Hit("c")
	r2.Hit("typo")
	r2.Add("b", 0) // zero is not a hit
	tab := NewTable("test-group")
	tab.Add(r1.Sorted())
	tab.Add(r2.Sorted())
	if m := tab.Missing(); len(m) != 1 || m[0] != "b" {
		t.Fatalf("missing %v", m)
	}
	if u := tab.Undeclared(); len(u) != 1 || u[0] != "typo" {
		t.Fatalf("undeclared %v", u)
	}
	var out strings.Builder
	tab.Write(&out)
	for _, want := range []string{"2 runs", "never reached: b", "not declared: typo"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("table lacks %q:\n%s", want, out.String())
		}
	}
	if tab.total["a"] != 3 || tab.runs["a"] != 1 {
		t.Fatalf("a counted %d in %d runs", tab.total["a"], tab.runs["a"])
	}
}

func TestDeclaringTwiceIsAProgrammingError(t *testing.T) {
	Declare("twice", Point{Name: "x"})
	defer func() {
		if recover() == nil {
			t.Fatal("a second declaration was accepted")
		}
	}()
	Declare("twice", Point{Name: "x"})
}
