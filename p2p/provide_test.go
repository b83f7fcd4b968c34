package p2p

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"github.com/ipfs/go-cid"
	mh "github.com/multiformats/go-multihash"
)

func TestModelCIDRoundTrip(t *testing.T) {
	id := sha256.Sum256([]byte("merkle root of some weights"))
	c := ModelCID(id)
	if c.Version() != 1 || c.Type() != cid.Raw {
		t.Fatalf("cid version %d codec %#x, want v1 raw", c.Version(), c.Type())
	}
	dec, err := mh.Decode(c.Hash())
	if err != nil {
		t.Fatal(err)
	}
	if dec.Code != mh.SHA2_256 || !bytes.Equal(dec.Digest, id[:]) {
		t.Fatalf("multihash code %#x digest %x, want sha2-256 digest %x (no rehash)", dec.Code, dec.Digest, id)
	}
	parsed, err := cid.Decode(c.String())
	if err != nil || !parsed.Equals(c) {
		t.Fatalf("cid string round trip: %v %v", parsed, err)
	}
	if other := ModelCID([32]byte{1}); other.Equals(c) {
		t.Fatal("different model IDs share a CID")
	}
}
