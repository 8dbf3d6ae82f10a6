package keymove

import "strings"

// The keyspaces. In etcd (the metadata store), under a namespace:
//
//	<ns>map/<key>      the shard map: the id of the shard that owns key
//	<ns>plan/<plan>    the plan's moves, written once with its first checkpoint
//	<ns>ckpt/<plan>    the plan's checkpoint
//	<ns>epoch/<plan>   the swap epoch: every swap transaction compares its
//	                   mod revision, so bumping it kills swaps still in flight
//
// In every shard store:
//
//	d/<key>            the key's data
//	c/<key>            the key's control word: CtlOpen while the shard serves
//	                   the key, CtlMoved(plan) once a move has fenced it;
//	                   absent on a shard that never held it
const (
	// DataPrefix and CtlPrefix start a key's data and control word keys.
	DataPrefix = "d/"
	CtlPrefix  = "c/"
	// CtlOpen is the control word of a key its shard serves.
	CtlOpen = "open"
)

// CtlMoved is the control word a plan leaves on a source it fenced.
func CtlMoved(planID string) string { return "moved:" + planID }

// DataKey and CtlKey name a key's records in a shard store.
func DataKey(key string) []byte { return []byte(DataPrefix + key) }

// CtlKey names a key's control word in a shard store.
func CtlKey(key string) []byte { return []byte(CtlPrefix + key) }

// Keyspace names the executor's records in etcd.
type Keyspace struct{ NS string }

// DefaultNamespace is the etcd prefix used when none is given.
const DefaultNamespace = "km/"

func (k Keyspace) ns() string {
	if k.NS == "" {
		return DefaultNamespace
	}
	return k.NS
}

// MapKey names key's shard map entry.
func (k Keyspace) MapKey(key string) []byte { return []byte(k.ns() + "map/" + key) }

// MapRange is the [start, end) range of every shard map entry.
func (k Keyspace) MapRange() (start, end []byte) {
	return []byte(k.ns() + "map/"), []byte(k.ns() + "map0")
}

// MapEntryKey returns the user key of a shard map entry's etcd key.
func (k Keyspace) MapEntryKey(etcdKey []byte) (string, bool) {
	return strings.CutPrefix(string(etcdKey), k.ns()+"map/")
}

// PlanKey names the stored plan.
func (k Keyspace) PlanKey(plan string) []byte { return []byte(k.ns() + "plan/" + plan) }

// CheckpointKey names the plan's checkpoint.
func (k Keyspace) CheckpointKey(plan string) []byte { return []byte(k.ns() + "ckpt/" + plan) }

// EpochKey names the plan's swap epoch.
func (k Keyspace) EpochKey(plan string) []byte { return []byte(k.ns() + "epoch/" + plan) }
