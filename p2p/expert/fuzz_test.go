package expert

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

func sampleRequest(t testing.TB) *Request {
	rows, err := PackRows([][]float32{{1, 2, 3, 4}, {-1, 0.5, 0, 2}}, 4)
	if err != nil {
		t.Fatal(err)
	}
	return &Request{Network: testNetwork, Model: [32]byte{7}, Layer: 1, Dim: 4, Batches: []WireBatch{
		{Expert: 0, Positions: []uint32{3}, Rows: rows[:16]},
		{Expert: 2, Positions: []uint32{3, 4}, Rows: rows},
	}}
}

func FuzzDecodeRequest(f *testing.F) {
	good, err := EncodeRequest(sampleRequest(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte{0xa0})
	f.Add([]byte{0xa5, 0x01, 0x60, 0x02, 0x58, 0x20})
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := DecodeRequest(in)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if r.Check() != nil {
			t.Fatal("accepted a request failing Check")
		}
		b, err := EncodeRequest(r)
		if err != nil || !bytes.Equal(b, in) {
			t.Fatalf("accepted %x does not re-encode to itself (%v)", in, err)
		}
		for _, bt := range r.Batches {
			if _, err := UnpackRows(bt.Rows, int(r.Dim)); err != nil {
				t.Fatalf("accepted rows do not unpack: %v", err)
			}
		}
	})
}

func FuzzDecodeResponse(f *testing.F) {
	req := sampleRequest(f)
	h := newHolderIdentity(f)
	outs := [][]byte{req.Batches[0].Rows, req.Batches[1].Rows}
	rcpt, err := Sign(h.sess, NewReceipt(h.sess, req, outs, time.Now()), false)
	if err != nil {
		f.Fatal(err)
	}
	good, _ := EncodeResponse(&Response{Outputs: outs, Receipt: rcpt})
	refusal, _ := EncodeResponse(&Response{Code: CodeNotHeld, Reason: "not here"})
	f.Add(good)
	f.Add(refusal)
	f.Add(good[:len(good)-3])
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := DecodeResponse(in, req)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if r.Code == CodeOK {
			if len(r.Outputs) != len(req.Batches) || len(r.Receipt) == 0 {
				t.Fatalf("accepted success without every output and a receipt")
			}
			// Whatever the bytes, verification answers with an error or a
			// receipt matching the request: never a panic.
			if rc, err := Verify(nil, r.Receipt, h.machine(), h.peer, time.Now()); err == nil {
				_ = Match(rc, req, r.Outputs)
			}
		} else if len(r.Outputs) != 0 {
			t.Fatal("accepted a failure with outputs")
		}
	})
}

func FuzzDecodeReceipt(f *testing.F) {
	req := sampleRequest(f)
	h := newHolderIdentity(f)
	rcpt, err := Sign(h.sess, NewReceipt(h.sess, req, [][]byte{req.Batches[0].Rows, req.Batches[1].Rows}, time.Now()), false)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(rcpt)
	f.Add(rcpt[:40])
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := Verify(nil, in, h.machine(), h.peer, time.Now())
		if err != nil {
			if !errors.Is(err, ErrBadReceipt) && !errors.Is(err, ErrWrongSigner) && !errors.Is(err, ErrBadSignature) {
				t.Fatalf("error %v wraps no verification sentinel", err)
			}
			return
		}
		if m := h.machine(); !bytes.Equal(r.Machine, m[:]) {
			t.Fatal("verified a receipt naming another machine")
		}
	})
}
