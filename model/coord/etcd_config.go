package coord

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"shardsim/simkv"
)

// EtcdConfig configures an Etcd backend.
//
// # Logical time and the KV's clock
//
// Every operation takes the logical time now as an argument, exactly as the
// reference does, and every protocol decision (is the lease live, has the
// cooldown passed) is made on logical time alone. The KV has a clock of its
// own (virtual time in the simulation, wall time for a real etcd) that only
// drives etcd leases. The backend keeps each shard's owner binding under an
// etcd lease whose TTL covers the logical lease: one logical unit is
// TimeUnit of KV time, and the TTL is the lease duration in KV time plus
// LeaseSlack, rounded up to whole seconds (etcd's TTL granularity) and
// raised to etcd's minimum by the server. Acquire grants a fresh etcd lease;
// renew keeps the existing one alive, which restarts its full TTL.
//
// A lease-gated operation is accepted only if the logical lease is live AND
// its owner binding still exists, so the two clocks are checked together.
// Callers must advance them together (KV time ≈ logical time × TimeUnit):
// then the binding outlives the logical lease by LeaseSlack and the backend
// decides exactly as the reference does. If the KV's clock runs ahead by
// more than LeaseSlack, bindings vanish early and lease-gated operations
// fail closed with CodeLeaseExpired; if it runs behind, bindings outlive
// their leases, which is harmless because the logical deadline still
// decides.
type EtcdConfig struct {
	// Config is the protocol configuration shared with the reference:
	// default lease duration, shard limits, claim cooldown and bugs.
	Config
	// Namespace prefixes every key; it must end with '/'.
	Namespace string
	// TimeUnit is the KV time of one LogicalTime unit.
	TimeUnit time.Duration
	// LeaseSlack is how much longer than the logical lease an owner
	// binding's etcd lease lives.
	LeaseSlack time.Duration
	// MaxChildrenPerOp caps the children of one split_replace, so that the
	// parent and all its children fit in one transaction.
	MaxChildrenPerOp int
	// MaxTxnOps is the cluster's --max-txn-ops: the most compares, or ops
	// of one branch, that a transaction may hold.
	MaxTxnOps int
	// MaxAttempts bounds the compare-and-swap attempts of one operation
	// and the transport retries of one request.
	MaxAttempts int
	// BackoffBase and BackoffMax bound the exponential backoff between
	// attempts, slept on the KV's clock.
	BackoffBase, BackoffMax time.Duration
	// PageSize is the number of keys a scan reads per request.
	PageSize int
	// Instance identifies this coordinator among all that share the store.
	// Every record it writes carries a write stamp (Instance and a
	// per-coordinator sequence number) that makes the write unique, so
	// that reading back an ambiguous commit can tell it from another
	// coordinator's identical write (etcd_readback.go). Coordinators that
	// share a store must therefore have distinct instances, and a
	// coordinator built again (a restarted process) needs a new one, as
	// its sequence starts over: a deployment draws a random one per
	// process; the simulation gives each coordinator a unique,
	// deterministic one. Zero is a valid instance, so a lone coordinator
	// (a test) may leave it unset.
	Instance uint64
}

// Defaults of EtcdConfig.
const (
	defaultEtcdNamespace        = "/shardsim/coord/"
	defaultEtcdTimeUnit         = time.Second
	defaultEtcdLeaseSlack       = time.Second
	defaultEtcdMaxChildrenPerOp = 8
	defaultEtcdMaxAttempts      = 8
	defaultEtcdBackoffBase      = time.Millisecond
	defaultEtcdBackoffMax       = 64 * time.Millisecond
	defaultEtcdPageSize         = 256
)

// DefaultEtcdConfig returns DefaultConfig with the etcd defaults.
func DefaultEtcdConfig() EtcdConfig {
	return EtcdConfig{Config: DefaultConfig()}.WithDefaults()
}

// WithDefaults returns c with every zero etcd field set to its default.
// The embedded protocol Config is left as it is.
func (c EtcdConfig) WithDefaults() EtcdConfig {
	if c.Namespace == "" {
		c.Namespace = defaultEtcdNamespace
	}
	if c.TimeUnit == 0 {
		c.TimeUnit = defaultEtcdTimeUnit
	}
	if c.LeaseSlack == 0 {
		c.LeaseSlack = defaultEtcdLeaseSlack
	}
	if c.MaxChildrenPerOp == 0 {
		c.MaxChildrenPerOp = defaultEtcdMaxChildrenPerOp
	}
	if c.MaxTxnOps == 0 {
		c.MaxTxnOps = simkv.DefaultMaxTxnOps
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = defaultEtcdMaxAttempts
	}
	if c.BackoffBase == 0 {
		c.BackoffBase = defaultEtcdBackoffBase
	}
	if c.BackoffMax == 0 {
		c.BackoffMax = defaultEtcdBackoffMax
	}
	if c.PageSize == 0 {
		c.PageSize = defaultEtcdPageSize
	}
	return c
}

// Validate checks c after defaults are applied.
func (c EtcdConfig) Validate() error {
	c = c.WithDefaults()
	if err := c.Config.Validate(); err != nil {
		return err
	}
	switch {
	case !strings.HasSuffix(c.Namespace, "/"):
		return errors.New("coord: etcd config: namespace must end with '/'")
	case c.TimeUnit <= 0 || c.LeaseSlack < 0 || c.BackoffBase < 0 || c.BackoffMax < c.BackoffBase:
		return errors.New("coord: etcd config: negative or inverted durations")
	case c.MaxAttempts < 1 || c.PageSize < 1:
		return errors.New("coord: etcd config: attempts and page size must be positive")
	case c.MaxChildrenPerOp < 2 || c.MaxChildrenPerOp > MaxSplitChildren:
		return fmt.Errorf("coord: etcd config: max children per op %d outside [2, %d]", c.MaxChildrenPerOp, MaxSplitChildren)
	}
	if cmps, ops := splitReplaceTxnSize(c.MaxChildrenPerOp); max(cmps, ops) > c.MaxTxnOps {
		return fmt.Errorf("coord: etcd config: a split_replace of %d children needs %d compares and %d ops, above max txn ops %d",
			c.MaxChildrenPerOp, cmps, ops, c.MaxTxnOps)
	}
	if c.MaxRootsPerRegister() < c.manifestLimit() {
		return fmt.Errorf("coord: etcd config: a manifest of %d shards (the manifest limit) does not fit a transaction of max txn ops %d", c.manifestLimit(), c.MaxTxnOps)
	}
	return nil
}

// Transaction sizes. etcd limits each list of a transaction (the compares,
// the success ops, the failure ops) to --max-txn-ops separately; these
// functions give the two lists the backend fills.

// splitReplaceTxnSize returns the compares and success ops of a
// split_replace with n children: compares on the parent's record, its owner
// binding and its run (still open), "no shard created since counted" on the
// tenant's and the global shard prefix, and each child key absent (5+n,
// as seed 004 counts them); puts of the parent, each child, and the
// deletion of the owner binding (2+n). 7+2n in all.
func splitReplaceTxnSize(n int) (compares, ops int) { return 5 + n, 2 + n }

// registerTxnSize returns the compares and success ops of a
// register_shards of n roots: the run record, the two prefix counts and
// each root absent (3+n); puts of the run, its active-run index entry and
// each root (2+n).
func registerTxnSize(n int) (compares, ops int) { return 3 + n, 2 + n }

// MaxRootsPerRegister is the largest manifest whose registration fits in
// one transaction.
func (c EtcdConfig) MaxRootsPerRegister() int {
	c = c.WithDefaults()
	return c.MaxTxnOps - 3
}

// OwnerLeaseTTL returns the TTL, in whole seconds, of the etcd lease that
// backs an owner binding for a logical lease of d units: d·TimeUnit +
// LeaseSlack rounded up, at least 1 and at most etcd's largest TTL.
func (c EtcdConfig) OwnerLeaseTTL(d LogicalDuration) int64 {
	c = c.WithDefaults()
	const maxTTL = time.Duration(simkv.MaxLeaseTTL) * time.Second // no overflow: 9e18 ns
	if uint64(d) > uint64((maxTTL-c.LeaseSlack)/c.TimeUnit) {
		return simkv.MaxLeaseTTL
	}
	total := time.Duration(d)*c.TimeUnit + c.LeaseSlack
	ttl := int64((total + time.Second - 1) / time.Second)
	return min(max(ttl, 1), simkv.MaxLeaseTTL)
}
