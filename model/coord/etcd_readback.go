package coord

import (
	"bytes"
	"errors"

	"shardsim/simkv"
)

// landed decides whether a transaction whose answer was lost took effect.
// Every commit puts its witness key, which nothing deletes, and compares it
// against the state read at w.readRev. So the transaction landed iff the
// first write to the witness after that read is ours: the key's version
// w.vers+1 holds exactly the value we sent. That version is found in the
// key's history by reading it at past revisions. The answer is never a
// guess: if the history was compacted away or cannot be read, the outcome
// is unknown and the operation fails transiently.
//
// Over a network a request delayed past its deadline can still apply
// after this read-back said it had not. Its compares refer to the old read,
// so it can never overwrite a later write; if it lands before the retry's
// re-read, the retry acts on the new state (an idempotent operation
// replays, acquire raises the fence once more, renew extends again, all
// safe), and if the operation has meanwhile given up, the caller was not
// told of an effect. That is etcd's own ambiguity, and what op ids let a
// caller settle by retrying.
func (e *Etcd) landed(label string, w witness) (bool, error) {
	label += ".readback"
	rev, kvs, err := e.get(label, w.key)
	if err != nil {
		return false, err
	}
	cur := kvs[0]
	if (cur == nil && w.modRev == 0) || (cur != nil && cur.ModRevision == w.modRev) {
		return false, nil // untouched since the read: ours did not land
	}
	next := w.vers + 1
	if cur != nil && cur.Version == next {
		return bytes.Equal(cur.Value, w.value), nil
	}
	// Several writes since the read: find the first in history, the
	// smallest revision at which the key reached version next.
	lo, hi := w.readRev+1, rev
	for lo < hi {
		mid := lo + (hi-lo)/2
		kv, err := e.versionAt(label, w.key, mid)
		if err != nil {
			return false, err
		}
		if kv != nil && kv.Version >= next {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	kv, err := e.versionAt(label, w.key, lo)
	if err != nil {
		return false, err
	}
	if kv == nil || kv.Version != next {
		return false, transient(label, "witness history has no version %d", next)
	}
	return bytes.Equal(kv.Value, w.value), nil
}

// versionAt reads key as of revision rev.
func (e *Etcd) versionAt(label string, key []byte, rev int64) (*simkv.KeyValue, error) {
	var resp *simkv.RangeResponse
	err := e.retry(label, func() (err error) {
		resp, err = e.kv.Range(simkv.RangeRequest{Key: key, Revision: rev})
		return err
	})
	switch {
	case errors.Is(err, simkv.ErrCompacted):
		return nil, transient(label, "outcome unknown: history compacted")
	case err != nil:
		return nil, infraOf(label, err)
	}
	return firstKV(resp), nil
}
