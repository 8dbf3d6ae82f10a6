package coord

import (
	"encoding/binary"
	"sync"

	"github.com/zeebo/blake3"
)

// hashDomain is a domain-separated 64-bit blake3 hash: a keyed blake3 whose
// key is derived (blake3's key-derivation mode) from a context string
// naming the use. Hashers are pooled because each costs a few kilobytes
// and the checkpoint hot path hashes every request; pooling changes no
// result.
type hashDomain struct {
	key  [32]byte
	pool sync.Pool
}

func newHashDomain(context string) *hashDomain {
	d := &hashDomain{}
	blake3.DeriveKey(context, nil, d.key[:])
	d.pool.New = func() any {
		h, err := blake3.NewKeyed(d.key[:])
		if err != nil {
			panic(err) // the key is 32 bytes by construction
		}
		return h
	}
	return d
}

// sum64 returns the first 8 bytes of the keyed hash of in, little-endian
// (blake3's output is extendable: its first 8 bytes are the 8-byte hash).
func (d *hashDomain) sum64(in []byte) uint64 {
	h := d.pool.Get().(*blake3.Hasher)
	h.Reset()
	h.Write(in)
	var out [32]byte
	h.Sum(out[:0])
	d.pool.Put(h)
	return binary.LittleEndian.Uint64(out[:8])
}
