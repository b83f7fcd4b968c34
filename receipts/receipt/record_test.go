package receipt

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// The golden values pin the chain record's bytes: the CBOR that the wire,
// the stores and the chain state carry, the signing bytes a settler signs
// and the signature itself (Ed25519 is deterministic). They were computed
// by the ledger's code before the record moved here and change only with
// a chain upgrade.
const (
	goldenRecordCBOR = "ac015820101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f025820303132333435363738" +
		"393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f035820505152535455565758595a5b5c5d5e5f606162636465" +
		"666768696a6b6c6d6e6f045820707172737475767778797a7b7c7d7e7f808182838485868788898a8b8c8d8e8f051a00" +
		"01e240065820909192939495969798999a9b9c9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeaf07507265636569707420" +
		"656e76656c6f706508582083b93605ef0fd17116d35eb6ce85ede3d6c4f3a1e87c18930c36b16a4af12b07091903150a" +
		"1a6553f1000b1910920c58401d024e63d60eb452c1553d48dc2b023c41f74ff7b9202b2d96f25f40b62fb31307c98a09" +
		"136b86f0c0fe692415244bfa3bf854a12497cf41b3209aa361fd000b"
	goldenRecordSigning = "74656e7a726f2f76312f7061796d656e742d7265636f7264000f74656e7a726f2d676f6c64656e2d31aa015820101112" +
		"131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f025820303132333435363738393a3b3c3d3e3f" +
		"404142434445464748494a4b4c4d4e4f035820505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c" +
		"6d6e6f045820707172737475767778797a7b7c7d7e7f808182838485868788898a8b8c8d8e8f051a0001e24006582090" +
		"9192939495969798999a9b9c9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeaf08582083b93605ef0fd17116d35eb6ce85" +
		"ede3d6c4f3a1e87c18930c36b16a4af12b07091903150a1a6553f1000b191092"
	goldenRecordSig = "1d024e63d60eb452c1553d48dc2b023c41f74ff7b9202b2d96f25f40b62fb31307c98a09136b86f0c0fe692415244bfa" +
		"3bf854a12497cf41b3209aa361fd000b"
)

const recordChain = "tenzro-golden-1"

func goldenRecord(t testing.TB) (*PaymentRecord, ed25519.PrivateKey) {
	t.Helper()
	seed := sha256.Sum256([]byte("golden settler"))
	priv := ed25519.NewKeyFromSeed(seed[:])
	fill := func(b byte) (h [32]byte) {
		for i := range h {
			h[i] = b + byte(i)
		}
		return h
	}
	r := &PaymentRecord{
		Payer: terms.AccountID(fill(0x10)), Provider: fill(0x30),
		RequestDigest: fill(0x50), QuoteDigest: fill(0x70), Price: 123456,
		ReceiptHash: fill(0x90), Receipt: []byte("receipt envelope"),
		Units: 789, Time: 1_700_000_000, ExpiryHeight: 4242,
	}
	if err := SignRecord(priv, recordChain, r); err != nil {
		t.Fatal(err)
	}
	return r, priv
}

func TestRecordGoldenBytes(t *testing.T) {
	r, _ := goldenRecord(t)
	enc, err := cborx.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := RecordSigningBytes(recordChain, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, got, want string }{
		{"cbor", hex.EncodeToString(enc), goldenRecordCBOR},
		{"signing bytes", hex.EncodeToString(sb), goldenRecordSigning},
		{"signature", hex.EncodeToString(r.Sig), goldenRecordSig},
	} {
		if c.got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, c.got, c.want)
		}
	}
	var back PaymentRecord
	if err := cborx.UnmarshalCanonical(enc, 1<<20, &back); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if err := back.VerifySig(recordChain); err != nil {
		t.Fatalf("decoded record: %v", err)
	}
}

func TestRecordSig(t *testing.T) {
	r, priv := goldenRecord(t)
	if r.Settler != terms.AccountOf(priv.Public().(ed25519.PublicKey)) {
		t.Fatal("SignRecord did not set the settler")
	}
	if err := r.VerifySig(recordChain); err != nil {
		t.Fatal(err)
	}
	if err := r.VerifySig("other-chain"); !errors.Is(err, ErrRecordSig) {
		t.Fatalf("other chain: %v, want ErrRecordSig", err)
	}
	r.Receipt = []byte("another envelope") // not signed: bound by ReceiptHash
	if err := r.VerifySig(recordChain); err != nil {
		t.Fatalf("receipt outside the signature: %v", err)
	}
	r.Price++
	if err := r.VerifySig(recordChain); !errors.Is(err, ErrRecordSig) {
		t.Fatalf("altered price: %v, want ErrRecordSig", err)
	}
	r.Sig = r.Sig[:10]
	if err := r.VerifySig(recordChain); !errors.Is(err, ErrRecordSig) {
		t.Fatalf("short signature: %v, want ErrRecordSig", err)
	}
}
