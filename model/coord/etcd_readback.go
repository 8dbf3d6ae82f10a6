package coord

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"shardsim/simkv"
)

// Reading back an ambiguous commit.
//
// landed decides whether a transaction whose answer was lost took effect.
// Every commit puts its witness key (a shard or run record), which nothing
// deletes, and compares it against the state read at w.readRev. So the
// transaction landed iff the first write to the witness after that read is
// ours: the key's version w.vers+1 holds exactly the value we sent. That
// version is found in the key's history by reading it at past revisions.
// The answer is never a guess: if the history was compacted away or cannot
// be read, the outcome is unknown and the operation fails transiently.
//
// "Exactly the value we sent" only identifies our transaction if no other
// transaction can send that value. The records alone do not ensure it: two
// requests that decide the same thing on the same state write the same
// bytes. Two slots of one worker acquiring one shard at one logical time
// are the case that bit: each computes fence+1, the worker, the same
// deadline. If the first slot's commit was lost unapplied and the second
// slot's landed, the first read back the second's write as its own, and
// both slots believed they held the lease at the same fence. So every
// record value the backend writes ends with a write stamp: the writing
// coordinator's EtcdConfig.Instance and a sequence number it raises for
// every commit it builds, that is for every attempt. No two attempts share
// a stamp (a coordinator numbers its own, and instances are distinct), so
// the value in the witness's history is ours only if our transaction wrote
// it;
// a twin's write makes the read-back answer "not landed", and the retry
// re-reads and decides afresh (the first slot re-acquires at fence+2,
// fencing the second out, as the reference would order the two). Every
// stamped value is a record, so the stamp needs no key, no op and no
// compare of its own: transaction sizes are unchanged.
//
// A transaction of an earlier attempt (ours, or of an operation we gave
// up on) that was delayed and lands late carries an older stamp, so it is
// never taken for the current attempt's either. If it lands before the
// current attempt's read, that attempt simply sees its effect; if it
// lands between that read and the current commit, it is the first write
// after the read, its stamp is not ours, and the current commit, which
// compares the state it read, can no longer apply: "not landed" is then
// the truth, and the retry acts on the new state (an idempotent operation
// replays, acquire raises the fence once more, renew extends again, all
// safe). Over a network a request delayed past its deadline can also
// apply after this read-back said it had not (its compares refer to the
// old read, so it can never overwrite a later write); if the operation has
// meanwhile given up, the caller was not told of an effect. That is etcd's
// own ambiguity, and what op ids let a caller settle by retrying.

// WriteStamp identifies the attempt that wrote a record: the writing
// coordinator's instance and its sequence number for that attempt.
type WriteStamp struct {
	Instance uint64 // EtcdConfig.Instance of the writing coordinator
	Seq      uint64 // the attempt's number among that coordinator's, from 1
}

// writeStampLen is the size of an encoded WriteStamp.
const writeStampLen = 16

// AppendWriteStamp appends s to a record's encoding, giving the value the
// etcd backend stores for the record.
func AppendWriteStamp(record []byte, s WriteStamp) []byte {
	record = binary.BigEndian.AppendUint64(record, s.Instance)
	return binary.BigEndian.AppendUint64(record, s.Seq)
}

// SplitEtcdRecordValue splits a shard or run record value as the etcd
// backend stores it into the record's encoding (for the codec's Decode
// functions) and the write stamp of the attempt that wrote it.
func SplitEtcdRecordValue(v []byte) ([]byte, WriteStamp, error) {
	if len(v) < writeStampLen {
		return nil, WriteStamp{}, fmt.Errorf("coord: etcd record value of %d bytes has no write stamp", len(v))
	}
	n := len(v) - writeStampLen
	return v[:n:n], WriteStamp{Instance: binary.BigEndian.Uint64(v[n:]), Seq: binary.BigEndian.Uint64(v[n+8:])}, nil
}

// nextStamp returns the write stamp of a new attempt.
func (e *Etcd) nextStamp() WriteStamp {
	e.seq++
	return WriteStamp{Instance: e.cfg.Instance, Seq: e.seq}
}

// landed is the read-back described above.
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
