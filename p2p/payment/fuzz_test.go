package payment

import (
	"bytes"
	"errors"
	"testing"

	"github.com/tenzrod/tenzrod/receipts/cborx"
)

func FuzzDecodeDelivery(f *testing.F) {
	good, err := encodeDelivery(&Delivery{Network: testNetwork, Records: records(f, 2, 40)})
	if err != nil {
		f.Fatal(err)
	}
	empty, _ := cborx.Marshal(&Delivery{Network: testNetwork})
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(empty)
	f.Add([]byte{0xa2, 0x01, 0x60, 0x02, 0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0xa1, 0x02, 0x81, 0xa0})
	f.Fuzz(func(t *testing.T, in []byte) {
		d, err := DecodeDelivery(in)
		if err != nil {
			if !errors.Is(err, ErrMalformedDelivery) {
				t.Fatalf("error %v does not wrap ErrMalformedDelivery", err)
			}
			return
		}
		if n := len(d.Records); n == 0 || n > MaxRecords {
			t.Fatalf("accepted %d records", n)
		}
		// Canonical: what is accepted is exactly what a client sends.
		b, err := encodeDelivery(d)
		if err != nil {
			t.Fatalf("accepted delivery cannot be sent: %v", err)
		}
		if !bytes.Equal(b, in) {
			t.Fatalf("accepted %x re-encodes to %x", in, b)
		}
		for i := range d.Records {
			_ = CheckRecord(&d.Records[i]) // never panics on any decoded record
		}
	})
}

func FuzzDecodeAck(f *testing.F) {
	for _, a := range []*Ack{
		{Results: []Result{{}, {Code: CodeRetry, Reason: "later"}, {Code: 77, Reason: "price below the rate card"}}},
		{Results: []Result{{Code: CodeWrongNetwork, Reason: "\uFFFD"}}},
	} {
		b, _ := encodeAck(a)
		f.Add(b, uint8(len(a.Results)))
	}
	f.Add([]byte{0xa1, 0x01, 0x81, 0xa1, 0x02, 0x61, 0xff}, uint8(1))
	f.Add([]byte{0xa1, 0x01, 0x9a, 0xff, 0xff, 0xff, 0xff}, uint8(3))
	f.Fuzz(func(t *testing.T, in []byte, want uint8) {
		n := int(want) % (MaxRecords + 1)
		a, err := DecodeAck(in, n)
		if err != nil {
			if !errors.Is(err, ErrMalformedAck) {
				t.Fatalf("error %v does not wrap ErrMalformedAck", err)
			}
			return
		}
		if len(a.Results) != n {
			t.Fatalf("%d results accepted for %d records", len(a.Results), n)
		}
		for _, r := range a.Results {
			if len(r.Reason) > MaxReasonLen || clip(r.Reason) != r.Reason {
				t.Fatalf("accepted reason %q", r.Reason)
			}
		}
		b, err := encodeAck(a)
		if err != nil || !bytes.Equal(b, in) {
			t.Fatalf("accepted %x re-encodes to %x (%v)", in, b, err)
		}
	})
}
