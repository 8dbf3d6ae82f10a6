package listdelta

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"shardsim/model/bugs"
)

// drawer is where the model test draws its choices: rapid, or a seeded
// generator for the mutation checks (which must see the test fail).
type drawer interface {
	intn(lo, hi int, label string) int
}

type rapidDraws struct{ t *rapid.T }

func (d rapidDraws) intn(lo, hi int, label string) int {
	return rapid.IntRange(lo, hi).Draw(d.t, label)
}

type seededDraws struct{ r *rand.Rand }

func (d seededDraws) intn(lo, hi int, _ string) int { return lo + d.r.Intn(hi-lo+1) }

func pick[T any](d drawer, xs []T, label string) T { return xs[d.intn(0, len(xs)-1, label)] }

// The model-based test: random commands on a few lists (two of whose keys
// share a prefix up to a NUL byte), hashes, sets and sorted sets, with
// compactions and MULTI/EXEC transactions in between, against plain Go
// deques and maps.

var testLists = []string{"q", "q\x00r", "jobs"}
var testCounted = []string{"h", "h\x00x"}

type model struct {
	lists  map[string][]string
	counts map[Kind]map[string]map[string]string
}

func newModel() *model {
	m := &model{lists: map[string][]string{}, counts: map[Kind]map[string]map[string]string{}}
	for _, k := range []Kind{Hash, Set, ZSet} {
		m.counts[k] = map[string]map[string]string{}
		for _, uk := range testCounted {
			m.counts[k][uk] = map[string]string{}
		}
	}
	return m
}

// apply runs c on the model's list and returns the answer Redis gives.
func (m *model) apply(uk string, c Cmd) Answer {
	l := m.lists[uk]
	var a Answer
	switch c.Op {
	case "RPUSH":
		l = append(l, c.Vals...)
		a.N = int64(len(l))
	case "LPUSH":
		for _, v := range c.Vals {
			l = append([]string{v}, l...)
		}
		a.N = int64(len(l))
	case "LPOP":
		if len(l) > 0 {
			a.Val, a.OK, l = l[0], true, l[1:]
		}
	case "RPOP":
		if len(l) > 0 {
			a.Val, a.OK, l = l[len(l)-1], true, l[:len(l)-1]
		}
	case "LRANGE":
		a.Items = slices.Clone(l)
	case "LLEN":
		a.N = int64(len(l))
	case "LINDEX":
		i := c.Index
		if i < 0 {
			i += int64(len(l))
		}
		if i >= 0 && i < int64(len(l)) {
			a.Val, a.OK = l[i], true
		}
	case "LSET":
		i := c.Index
		if i < 0 {
			i += int64(len(l))
		}
		if i >= 0 && i < int64(len(l)) {
			l = slices.Clone(l)
			l[i] = c.Vals[0]
		} else {
			a.Err = ErrIndexOutOfRange
		}
	case "DEL":
		if len(l) > 0 {
			a.N = 1
		}
		l = nil
	}
	m.lists[uk] = l
	return a
}

// run runs c on the store as a standalone command.
func run(s *Store, uk string, c Cmd) (Answer, error) {
	var a Answer
	var err error
	switch c.Op {
	case "RPUSH":
		a.N, err = s.RPush(uk, c.Vals...)
	case "LPUSH":
		a.N, err = s.LPush(uk, c.Vals...)
	case "LPOP":
		a.Val, a.OK, err = s.LPop(uk)
	case "RPOP":
		a.Val, a.OK, err = s.RPop(uk)
	case "LRANGE":
		a.Items, err = s.LRange(uk, 0, -1)
	case "LLEN":
		a.N, err = s.LLen(uk)
	case "LINDEX":
		a.Val, a.OK, err = s.LIndex(uk, c.Index)
	case "LSET":
		a.Err = s.LSet(uk, c.Index, c.Vals[0])
	case "DEL":
		var had bool
		had, err = s.Del(uk)
		if had {
			a.N = 1
		}
	}
	return a, err
}

func drawCmd(t drawer, n *int) Cmd {
	op := pick(t, []string{"RPUSH", "LPUSH", "LPOP", "RPOP", "LRANGE", "LLEN", "LINDEX", "LSET", "DEL", "RPUSH", "LPOP"}, "op")
	c := Cmd{Op: op}
	switch op {
	case "RPUSH", "LPUSH":
		for i, k := 0, t.intn(1, 3, "n"); i < k; i++ {
			*n++
			c.Vals = append(c.Vals, fmt.Sprintf("v%d", *n))
		}
	case "LINDEX", "LSET":
		c.Index = int64(t.intn(-4, 4, "index"))
		*n++
		c.Vals = []string{fmt.Sprintf("s%d", *n)}
	}
	return c
}

func sameAnswer(a, b Answer) bool {
	return a.Val == b.Val && a.OK == b.OK && a.N == b.N && slices.Equal(a.Items, b.Items) && errors.Is(a.Err, b.Err)
}

// modelCheck runs random commands against the store and the model and
// returns the first disagreement.
func modelCheck(t drawer, set bugs.Set) error {
	be := NewLocal(set)
	cfg := Config{MaxDeltaCount: 4, MaxDeltaScanLimit: 1000, MaxKeysPerCompactionTx: t.intn(1, 6, "compact_batch"),
		ScanWindow: t.intn(1, 4, "window"), Attempts: 2}
	s := NewStore(be, cfg, set, "t")
	m := newModel()
	vals := 0
	for step := 0; step < 60; step++ {
		switch t.intn(0, 9, "what") {
		case 0:
			uk := pick(t, testLists, "list")
			if _, err := s.Compact(List, uk); err != nil {
				return fmt.Errorf("compact %q: %v", uk, err)
			}
		case 1:
			if err := countedStep(t, s, m); err != nil {
				return err
			}
		case 2:
			uk := pick(t, testLists, "list")
			var cmds []Cmd
			for i, k := 0, t.intn(1, 4, "cmds"); i < k; i++ {
				cmds = append(cmds, drawCmd(t, &vals))
			}
			got, err := s.Exec(uk, cmds)
			if err != nil {
				return fmt.Errorf("exec %q %v: %v", uk, cmds, err)
			}
			for i, c := range cmds {
				if want := m.apply(uk, c); !sameAnswer(got[i], want) {
					return fmt.Errorf("exec %q: %s answered %+v, want %+v", uk, c, got[i], want)
				}
			}
		default:
			uk := pick(t, testLists, "list")
			c := drawCmd(t, &vals)
			got, err := run(s, uk, c)
			if err != nil {
				return fmt.Errorf("%q %s: %v", uk, c, err)
			}
			if want := m.apply(uk, c); !sameAnswer(got, want) {
				return fmt.Errorf("%q %s answered %+v, want %+v (model %q)", uk, c, got, want, m.lists[uk])
			}
		}
	}
	for _, uk := range testLists {
		got, err := s.LRange(uk, 0, -1)
		if err != nil || !slices.Equal(got, m.lists[uk]) {
			return fmt.Errorf("final %q: %q %v, want %q", uk, got, err, m.lists[uk])
		}
	}
	return nil
}

// countedStep runs one command on a hash, set or sorted set.
func countedStep(t drawer, s *Store, m *model) error {
	kind := pick(t, []Kind{Hash, Set, ZSet}, "kind")
	uk := pick(t, testCounted, "key")
	member := pick(t, []string{"a", "b", "c"}, "member")
	mm := m.counts[kind][uk]
	switch t.intn(0, 3, "cop") {
	case 0:
		val := pick(t, []string{"1", "2"}, "val")
		if kind == Set {
			val = ""
		}
		got, err := s.add(kind, uk, member, val)
		_, had := mm[member]
		if err != nil || got == had {
			return fmt.Errorf("%s add %q %q: %v %v, had %v", kind, uk, member, got, err, had)
		}
		mm[member] = val
	case 1:
		got, err := s.remove(kind, uk, member)
		_, had := mm[member]
		if err != nil || got != had {
			return fmt.Errorf("%s remove %q %q: %v %v, had %v", kind, uk, member, got, err, had)
		}
		delete(mm, member)
	case 2:
		if _, err := s.Compact(kind, uk); err != nil {
			return fmt.Errorf("compact %s %q: %v", kind, uk, err)
		}
	default:
		n, err := s.count(kind, uk)
		if err != nil || n != int64(len(mm)) {
			return fmt.Errorf("%s count %q: %d %v, want %d", kind, uk, n, err, len(mm))
		}
	}
	return nil
}

func TestModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		if err := modelCheck(rapidDraws{t}, bugs.None); err != nil {
			t.Fatal(err)
		}
	})
}

// The model test catches the NUL-separated layout: "q" and "q\x00r" share
// a prefix up to the NUL, so one's resolution sums the other's deltas.
func TestModelCatchesTheNulLayout(t *testing.T) {
	set := bugs.MustParse(bugs.ListdeltaNulSeparator)
	for seed := int64(1); seed <= 200; seed++ {
		if err := modelCheck(seededDraws{rand.New(rand.NewSource(seed))}, set); err != nil {
			t.Logf("seed %d: %v", seed, err)
			return
		}
	}
	t.Fatal("200 runs of the NUL-separated layout passed the model test")
}
