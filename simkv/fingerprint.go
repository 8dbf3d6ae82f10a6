package simkv

import (
	"encoding/binary"

	"github.com/zeebo/blake3"
)

// Fingerprint returns a digest of everything that decides the store's future
// answers to requests: revisions, every key's history still readable, and
// the leases with their deadlines, keys and the id generator. Watches and
// undelivered watch responses are left out. Two stores with equal
// fingerprints answer every request alike.
//
// The encoding is laid out in one buffer and hashed once: a linearizability
// check fingerprints every state it reaches, and a hasher fed eight bytes at
// a time spends its time in call overhead.
func (s *Store) Fingerprint() string {
	b := make([]byte, 0, 256)
	put := func(v int64) { b = binary.LittleEndian.AppendUint64(b, uint64(v)) }
	putString := func(v string) {
		put(int64(len(v)))
		b = append(b, v...)
	}
	put(s.rev)
	put(s.compactRev)
	put(int64(s.leaseSeq))
	put(int64(len(s.ks.keys)))
	for _, k := range s.ks.keys {
		putString(k)
		hist := s.ks.hist[k].e
		put(int64(len(hist)))
		for i := range hist {
			e := &hist[i]
			put(e.mod)
			put(e.sub)
			if e.tomb() {
				put(1)
				continue
			}
			put(0)
			put(int64(len(e.value)))
			b = append(b, e.value...)
			put(e.create)
			put(e.version)
			put(e.lease)
		}
	}
	for _, l := range s.byDeadline() {
		put(l.id)
		put(l.ttl)
		put(int64(l.deadline))
		keys := l.sortedKeys()
		put(int64(len(keys)))
		for _, k := range keys {
			putString(k)
		}
	}
	sum := blake3.Sum256(b)
	return string(sum[:])
}
