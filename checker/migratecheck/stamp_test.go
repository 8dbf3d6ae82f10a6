package migratecheck

import (
	"reflect"
	"testing"

	"shardsim/model/migrate/mvcc"
)

// readStamp.equal and viewSource.equal compare field by field: they must
// name every field (a new one must be added to them and here) and agree
// with == on stamps that differ in any one field.
func TestStampEqualIsEquality(t *testing.T) {
	if n := reflect.TypeOf(readStamp{}).NumField(); n != 4 {
		t.Fatalf("readStamp has %d fields: update readStamp.equal and this test", n)
	}
	if n := reflect.TypeOf(viewSource{}).NumField(); n != 5 {
		t.Fatalf("viewSource has %d fields: update viewSource.equal and this test", n)
	}
	s1, s2 := mvcc.New(), mvcc.New()
	base := readStamp{valid: true, owned: true, floor: 7,
		src: viewSource{store: s1, live: 4, staged: 5, staging: true, job: 9}}
	variants := []func(*readStamp){
		func(*readStamp) {},
		func(s *readStamp) { s.valid = false },
		func(s *readStamp) { s.owned = false },
		func(s *readStamp) { s.floor++ },
		func(s *readStamp) { s.src.store = s2 },
		func(s *readStamp) { s.src.live++ },
		func(s *readStamp) { s.src.staged++ },
		func(s *readStamp) { s.src.staging = false },
		func(s *readStamp) { s.src.job++ },
	}
	for i, vi := range variants {
		for j, vj := range variants {
			a, b := base, base
			vi(&a)
			vj(&b)
			if a.equal(&b) != (a == b) || a.src.equal(&b.src) != (a.src == b.src) {
				t.Fatalf("variants %d, %d: equal %v / %v, == %v / %v", i, j, a.equal(&b), a.src.equal(&b.src), a == b, a.src == b.src)
			}
		}
	}
}
