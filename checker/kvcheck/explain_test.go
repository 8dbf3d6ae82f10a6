package kvcheck

import (
	"strings"
	"testing"
	"time"

	"shardsim/property"
)

// A history with no linearization is reported with the key and the
// operations involved: the one no order can place, what the model holds for
// its key at that point, and the key's last linearized operations.
func TestViolationNamesTheKeyAndOperations(t *testing.T) {
	h := (&hist{}).
		op(0, 0, 10, put("b", "x"), putOK(2)).
		op(0, 20, 30, put("a", "1"), putOK(3)).
		op(1, 40, 50, get("b"), got(3, kv("b", "x", 2, 2, 1))).
		// a stale read: "a" was written before this read began
		op(1, 60, 70, get("a"), got(3))
	h.ops[0].Metadata, h.ops[1].Metadata, h.ops[2].Metadata, h.ops[3].Metadata = "w", "w", "r", "r"
	v, viol := Check(h.ops, 5*time.Second)
	if v != property.VerdictViolation || viol == nil {
		t.Fatalf("verdict %s, want a violation", v)
	}
	if viol.Property != property.KVLinearizable || viol.Subject != (property.Subject{Kind: property.SubjectKey, ID: "a"}) {
		t.Fatalf("violation %+v", viol)
	}
	for _, want := range []string{
		`key "a": r range("a") -> rev=3 count=0 [60ns, 70ns] cannot be linearized`,
		`(3 of 4 operations)`,
		`the model holds "a"="1" (mod revision 3, revision 3)`,
		`w put("a" "1") -> rev=3 [20ns, 30ns]`,
	} {
		if !strings.Contains(viol.Detail, want) {
			t.Errorf("detail lacks %q:\n%s", want, viol.Detail)
		}
	}
	if strings.Contains(viol.Detail, `put("b"`) {
		t.Errorf("detail lists operations on another key:\n%s", viol.Detail)
	}
}

// When two orders of a history get equally far (two concurrent puts both
// answered with the same revision: either can come first, not both), the
// report is the same every time: porcupine lists its partial
// linearizations in map order, and the report reaches the trace's digest.
func TestViolationReportIsTheSameWhateverOrderPorcupineListsTies(t *testing.T) {
	h := (&hist{}).
		op(0, 0, 10, put("a", "1"), putOK(2)).
		op(1, 0, 10, put("b", "1"), putOK(2))
	first := ""
	for i := 0; i < 40; i++ {
		v, viol := Check(h.ops, 5*time.Second)
		if v != property.VerdictViolation || viol == nil {
			t.Fatalf("verdict %s, want a violation", v)
		}
		if i == 0 {
			first = viol.Detail
		} else if viol.Detail != first {
			t.Fatalf("check %d reported\n%s\nafter\n%s", i, viol.Detail, first)
		}
	}
}
