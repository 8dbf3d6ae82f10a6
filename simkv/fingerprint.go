package simkv

import (
	"encoding/binary"
	"hash"

	"lukechampine.com/blake3"
)

// Fingerprint returns a digest of everything that decides the store's future
// answers to requests: revisions, every key's history still readable, and
// the leases with their deadlines, keys and the id generator. Watches and
// undelivered watch responses are left out. Two stores with equal
// fingerprints answer every request alike.
func (s *Store) Fingerprint() string {
	h := blake3.New(32, nil)
	put := func(v int64) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		h.Write(b[:])
	}
	put(s.rev)
	put(s.compactRev)
	put(int64(s.leaseSeq))
	put(int64(len(s.ks.keys)))
	for _, k := range s.ks.keys {
		writeBytes(h, []byte(k))
		hist := s.ks.hist[k]
		put(int64(len(hist)))
		for _, e := range hist {
			put(e.main)
			put(e.sub)
			if e.tomb {
				put(1)
				continue
			}
			put(0)
			writeBytes(h, e.kv.Value)
			put(e.kv.CreateRevision)
			put(e.kv.Version)
			put(e.kv.Lease)
		}
	}
	for _, l := range s.byDeadline() {
		put(l.id)
		put(l.ttl)
		put(int64(l.deadline))
		keys := l.sortedKeys()
		put(int64(len(keys)))
		for _, k := range keys {
			writeBytes(h, []byte(k))
		}
	}
	return string(h.Sum(nil))
}

func writeBytes(h hash.Hash, b []byte) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}
