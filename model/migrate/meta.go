package migrate

import (
	"bytes"
	"errors"
	"time"

	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/job"
	"shardsim/simkv"
)

// The metadata store (simkv) holds the route catalog and the split jobs.
// Every change is a transaction that compares the mod revisions it read;
// an indeterminate answer is resolved by reading back.

// errConflict means a compare failed: someone else changed the record.
var errConflict = errors.New("metadata changed concurrently")

// getKey reads one key: its value and mod revision (0 when missing).
func getKey(kv simkv.KV, key string) ([]byte, int64, error) {
	return getKeyBytes(kv, []byte(key))
}

// catalogKey and liveJobKey are the keys read most (the catalog on every
// coordinator refresh, the live job pointer on every migrator reload) as
// request keys, made once.
var catalogKey, liveJobKey = requestKey(job.CatalogKey), requestKey(job.LiveJobKey)

// requestKey returns k as a request's key that every world may share:
// requests only read their keys, and its capacity is its length, so that
// even an append to it would copy.
func requestKey(k string) []byte {
	b := []byte(k)
	return b[:len(b):len(b)]
}

// getKeyBytes is getKey with the key already in bytes.
func getKeyBytes(kv simkv.KV, key []byte) ([]byte, int64, error) {
	r, err := kv.Range(simkv.RangeRequest{Key: key})
	if err != nil {
		return nil, 0, err
	}
	if len(r.Kvs) == 0 {
		return nil, 0, nil
	}
	return r.Kvs[0].Value, r.Kvs[0].ModRevision, nil
}

// LoadCatalog reads the catalog and its mod revision.
func LoadCatalog(kv simkv.KV) (catalog.Catalog, int64, error) {
	c, rev, _, err := loadCatalogFrom(kv, 0, nil)
	return c, rev, err
}

// loadCatalog is LoadCatalog decoding through the world's catalog cache.
func (e *Env) loadCatalog(kv simkv.KV) (catalog.Catalog, int64, error) {
	c, rev, _, err := loadCatalogFrom(kv, 0, &e.catalogs)
	return c, rev, err
}

// loadCatalogFrom is LoadCatalog for a reader that needs only a catalog of
// version min or later: ok is false, and the routes are not decoded, when
// the stored one is older. It decodes through cache (nil: none).
func loadCatalogFrom(kv simkv.KV, min uint64, cache *catalogCache) (c catalog.Catalog, rev int64, ok bool, err error) {
	b, rev, err := getKeyBytes(kv, catalogKey)
	if err != nil {
		return catalog.Catalog{}, 0, false, err
	}
	if rev == 0 {
		return catalog.Catalog{}, 0, false, errors.New("migrate: no catalog in the metadata store")
	}
	if v, err := catalog.DecodeVersion(b); err == nil && v < min {
		return catalog.Catalog{}, rev, false, nil
	}
	c, err = cache.decode(b)
	return c, rev, err == nil, err
}

// LoadJob reads job id and its mod revision (0: no such live job).
func LoadJob(kv simkv.KV, id uint64) (job.SplitJob, int64, error) {
	b, rev, err := getKey(kv, job.Key(id))
	if err != nil || rev == 0 {
		return job.SplitJob{}, rev, err
	}
	j, err := job.Decode(b)
	return j, rev, err
}

// LiveJob reads the live job pointer and, if set, the job.
func LiveJob(kv simkv.KV) (job.SplitJob, int64, bool, error) {
	b, _, err := getKeyBytes(kv, liveJobKey)
	if err != nil {
		return job.SplitJob{}, 0, false, err
	}
	id := job.DecodeID(b)
	if id == 0 {
		return job.SplitJob{}, 0, false, nil
	}
	j, rev, err := LoadJob(kv, id)
	if err != nil {
		return job.SplitJob{}, 0, false, err
	}
	return j, rev, rev != 0, nil
}

// guard is one compared mod revision.
type guard struct {
	key string
	rev int64
}

// commit runs a transaction: if every guard still holds, put puts (in
// order) and delete dels. probe names a key and the value it holds iff the
// transaction applied, used to resolve an indeterminate answer. It
// returns the revision the transaction wrote at, or errConflict when a
// guard failed.
func commit(kv simkv.KV, guards []guard, puts []keyPut, dels []string, probeKey string, probeVal []byte) (int64, error) {
	rev, _, err := commitResolved(kv, guards, puts, dels, probeKey, probeVal)
	return rev, err
}

// errIndeterminate is a transaction whose answer was lost (only returned
// when the caller asked not to resolve it).
var errIndeterminate = errors.New("metadata transaction outcome unknown")

// commitResolved is commit that also reports whether the first answer was
// lost and the outcome had to be read back.
func commitResolved(kv simkv.KV, guards []guard, puts []keyPut, dels []string, probeKey string, probeVal []byte) (int64, bool, error) {
	return commitTxn(kv, guards, puts, dels, probeKey, probeVal, true)
}

// commitTxn runs the transaction; with resolve false an indeterminate
// answer is returned as errIndeterminate instead of being read back.
func commitTxn(kv simkv.KV, guards []guard, puts []keyPut, dels []string, probeKey string, probeVal []byte, resolve bool) (int64, bool, error) {
	resp, err := kv.Txn(buildTxn(guards, puts, dels))
	if err == nil {
		if !resp.Succeeded {
			return 0, false, errConflict
		}
		return resp.Header.Revision, false, nil
	}
	if !simkv.IsIndeterminate(err) {
		return 0, false, err
	}
	if !resolve {
		return 0, true, errIndeterminate
	}
	// Resolve by reading back: the probe holds our value iff we applied.
	for {
		b, rev, rerr := getKey(kv, probeKey)
		if rerr != nil {
			if simkv.IsTransport(rerr) {
				kv.Sleep(20 * time.Millisecond)
				continue
			}
			return 0, true, rerr
		}
		if probeVal == nil && rev == 0 || probeVal != nil && bytes.Equal(b, probeVal) {
			return rev, true, nil
		}
		return 0, true, errConflict
	}
}

// buildTxn returns the transaction that checks guards, then puts puts (in
// their order) and deletes dels. Its parts are allocated together: a
// transaction of the most common shape (one guard, one put: a job update)
// fits in one txnRoom, compares, operations, put requests and the keys'
// bytes (disjoint windows, never changed afterwards; a key that repeats
// the one before it, as a job update's put repeats its guard, shares its
// window); a larger one grows out of it.
func buildTxn(guards []guard, puts []keyPut, dels []string) simkv.TxnRequest {
	room := new(txnRoom)
	size, prev := 0, ""
	count := func(k string) {
		if k != prev {
			size, prev = size+len(k), k
		}
	}
	for _, g := range guards {
		count(g.key)
	}
	for _, p := range puts {
		count(p.key)
	}
	for _, k := range dels {
		count(k)
	}
	buf := room.keys[:0]
	if size > len(room.keys) {
		buf = make([]byte, 0, size)
	}
	var last string
	var lastBytes []byte
	keyBytes := func(k string) []byte {
		if lastBytes != nil && k == last {
			return lastBytes
		}
		at := len(buf)
		buf = append(buf, k...)
		last, lastBytes = k, buf[at:len(buf):len(buf)]
		return lastBytes
	}
	txn := simkv.TxnRequest{Compare: room.compare[:0], Success: room.ops[:0]}
	if n := len(puts) + len(dels); n > len(room.ops) {
		txn.Success = make([]simkv.RequestOp, 0, n)
	}
	for _, g := range guards {
		txn.Compare = append(txn.Compare, simkv.Compare{Target: simkv.CompareMod, Result: simkv.CompareEqual, Key: keyBytes(g.key), ModRevision: g.rev})
	}
	putReqs := room.puts[:0]
	for _, p := range puts {
		putReqs = append(putReqs, simkv.PutRequest{Key: keyBytes(p.key), Value: p.val})
	}
	for i := range putReqs {
		txn.Success = append(txn.Success, simkv.RequestOp{Put: &putReqs[i]})
	}
	for _, k := range dels {
		txn.Success = append(txn.Success, simkv.RequestOp{DeleteRange: &simkv.DeleteRangeRequest{Key: keyBytes(k)}})
	}
	return txn
}

// txnRoom is the room of a transaction of one guard and one put, whose
// keys take at most 32 bytes (a job key takes 26), in one allocation
// instead of four.
type txnRoom struct {
	compare [1]simkv.Compare
	ops     [1]simkv.RequestOp
	puts    [1]simkv.PutRequest
	keys    [32]byte
}

// keyPut is one put of a transaction.
type keyPut struct {
	key string
	val []byte
}

// putSet is an ordered set of puts: a key keeps the place of its first put
// and the value of its last. A transaction puts a handful of keys, so a
// list searched in order does, and the set holds up to maxTxnPuts of them
// itself: a set that is a local variable allocates nothing (only a set
// that outgrows its room moves its puts to a slice).
type putSet struct {
	room [maxTxnPuts]keyPut
	n    int      // puts in room, while more is nil
	more []keyPut // every put, once room overflowed
}

// maxTxnPuts is the most puts a metadata transaction makes (the room a
// put set holds).
const maxTxnPuts = 4

// list returns the puts in order.
func (p *putSet) list() []keyPut {
	if p.more != nil {
		return p.more
	}
	return p.room[:p.n]
}

func (p *putSet) put(k string, v []byte) {
	puts := p.list()
	for i := range puts {
		if puts[i].key == k {
			puts[i].val = v
			return
		}
	}
	switch {
	case p.more != nil:
		p.more = append(p.more, keyPut{k, v})
	case p.n < len(p.room):
		p.room[p.n] = keyPut{k, v}
		p.n++
	default:
		// Copied out, not resliced: a slice of room kept in the set would
		// move every set to the heap.
		p.more = append(append(make([]keyPut, 0, 2*len(p.room)), p.room[:]...), keyPut{k, v})
	}
}

// get returns the value put for k (nil if none).
func (p *putSet) get(k string) []byte {
	for _, kp := range p.list() {
		if kp.key == k {
			return kp.val
		}
	}
	return nil
}
