package coord

import (
	"encoding/binary"
	"sync"

	"lukechampine.com/blake3"
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
	blake3.DeriveKey(d.key[:], context, nil)
	d.pool.New = func() any { return blake3.New(8, d.key[:]) }
	return d
}

// sum64 returns the first 8 bytes of the keyed hash of in, little-endian.
func (d *hashDomain) sum64(in []byte) uint64 {
	h := d.pool.Get().(*blake3.Hasher)
	h.Reset()
	h.Write(in)
	var out [8]byte
	h.Sum(out[:0])
	d.pool.Put(h)
	return binary.LittleEndian.Uint64(out[:])
}
