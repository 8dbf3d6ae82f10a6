package keymove

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"

	"github.com/zeebo/blake3"
)

// ShardID names one shard store.
type ShardID string

// KeyMove is one item of a plan: key moves from Source to Target.
type KeyMove struct {
	Key    string
	Source ShardID
	Target ShardID
}

// Plan is the seed's immutable, ordered list of key moves. Its ID is a
// digest of its moves, so the same moves always make the same plan and a
// re-run of "the same plan" finds its own checkpoint.
type Plan struct {
	ID    string
	Moves []KeyMove
}

// Topology is a set of shards; a key belongs to the shard with the highest
// rendezvous weight for it (highest random weight hashing), so adding or
// removing one shard moves only the keys that must move.
type Topology struct {
	Shards []ShardID
}

// Owner returns the shard that owns key under t. t must not be empty.
func (t Topology) Owner(key string) ShardID {
	var best ShardID
	var bestW uint64
	for i, s := range t.Shards {
		w := weight(s, key)
		if i == 0 || w > bestW || (w == bestW && s < best) {
			best, bestW = s, w
		}
	}
	return best
}

func weight(s ShardID, key string) uint64 {
	h := blake3.New()
	h.Write([]byte(s))
	h.Write([]byte{0})
	h.Write([]byte(key))
	return binary.BigEndian.Uint64(h.Sum(nil)[:8]) // blake3's first 8 bytes are its 8-byte hash
}

// NewPlan is the planner (the seed's IShardMigrationPlanner): the moves that
// take every key from its owner under old to its owner under next, in key
// order. Keys must be unique and non-empty; both topologies non-empty with
// unique shard ids.
func NewPlan(keys []string, old, next Topology) (Plan, error) {
	for _, t := range []Topology{old, next} {
		if err := t.validate(); err != nil {
			return Plan{}, err
		}
	}
	sorted := append([]string(nil), keys...)
	sort.Strings(sorted)
	var moves []KeyMove
	for i, k := range sorted {
		if k == "" {
			return Plan{}, fmt.Errorf("keymove: empty key")
		}
		if i > 0 && sorted[i-1] == k {
			return Plan{}, fmt.Errorf("keymove: duplicate key in the key set")
		}
		if from, to := old.Owner(k), next.Owner(k); from != to {
			moves = append(moves, KeyMove{Key: k, Source: from, Target: to})
		}
	}
	return Plan{ID: planID(moves), Moves: moves}, nil
}

func (t Topology) validate() error {
	if len(t.Shards) == 0 {
		return fmt.Errorf("keymove: empty topology")
	}
	seen := map[ShardID]bool{}
	for _, s := range t.Shards {
		if s == "" || seen[s] {
			return fmt.Errorf("keymove: topology shard ids must be unique and non-empty")
		}
		seen[s] = true
	}
	return nil
}

// planID digests the moves in order (length-prefixed fields).
func planID(moves []KeyMove) string {
	h := blake3.New()
	h.Write([]byte("shardsim/keymove/plan/v1"))
	var n [8]byte
	for _, m := range moves {
		for _, f := range []string{m.Key, string(m.Source), string(m.Target)} {
			binary.BigEndian.PutUint64(n[:], uint64(len(f)))
			h.Write(n[:])
			h.Write([]byte(f))
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Index returns the position of key in the plan, or -1.
func (p Plan) Index(key string) int {
	i := sort.Search(len(p.Moves), func(i int) bool { return p.Moves[i].Key >= key })
	if i < len(p.Moves) && p.Moves[i].Key == key {
		return i
	}
	return -1
}
