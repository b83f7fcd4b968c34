package expert

import (
	"crypto/sha256"
	"encoding/binary"
)

// KeyDomain separates expert DHT keys from every other hash.
const KeyDomain = "tenzro/v1/expert-key"

// Key is the 32-byte DHT key of expert e of layer l of a model: holders
// provide it (p2p.Host.ProvideModel takes any 32-byte key) and serving
// nodes find holders of one expert by it, one record per (model, layer,
// expert).
func Key(model [32]byte, layer, e uint32) [32]byte {
	b := make([]byte, 0, len(KeyDomain)+32+8)
	b = append(b, KeyDomain...)
	b = append(b, model[:]...)
	b = binary.BigEndian.AppendUint32(b, layer)
	b = binary.BigEndian.AppendUint32(b, e)
	return sha256.Sum256(b)
}
