package receipt

import (
	"bytes"
	"testing"

	"github.com/tenzrod/tenzrod/receipts/hwkey"
)

func FuzzVerifyReceipt(f *testing.F) {
	p := newProvider(f, hwkey.BackendSoftware)
	good := sign(f, p, newReceipt(f, p))
	payload, err := newReceipt(f, p).Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	moe := newReceipt(f, p)
	moe.Units.ExpertTokens, moe.ExpertsHash = 96, bytes.Repeat([]byte{5}, HashSize)
	f.Add(sign(f, p, moe))
	f.Add(good[:len(good)/2])
	f.Add(payload)
	f.Add(sealRaw(f, p, "tenzro/v1/heartbeat", PayloadType, payload))
	f.Add([]byte{0xa0})
	pinned, now := p.machine(), t0
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Verify(b, pinned, now)
		_, pr, perr := Parse(b)
		if perr == nil {
			if _, err := pr.Marshal(); err != nil {
				t.Fatalf("parsed receipt does not encode: %v", err)
			}
		}
		if err != nil {
			if r != nil {
				t.Fatal("Verify returned a receipt with an error")
			}
			return
		}
		// Only an envelope signed by p's session verifies; it parses too,
		// and names p.
		if perr != nil {
			t.Fatalf("verified envelope does not parse: %v", perr)
		}
		if !bytes.Equal(r.MachineID, pinned[:]) || !bytes.Equal(r.ProviderPeer, p.sess.Cert.PeerID) {
			t.Fatal("verified a receipt naming another signer")
		}
		_ = Check(r, Observed{})
		_, _ = Cap(r.Units, Observed{ExactInputTokens: -1, ExactOutputTokens: -1})
	})
}

func FuzzUnmarshalBill(f *testing.F) {
	enc, err := testPayment(f).Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(enc)
	f.Add(enc[:len(enc)-3])
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := UnmarshalBill(b)
		if err != nil {
			return
		}
		re, err := p.Marshal()
		if err != nil || !bytes.Equal(re, b) {
			t.Fatalf("accepted record does not re-encode to its input: %v", err)
		}
		_ = p.Digest()
	})
}
