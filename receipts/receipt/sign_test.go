package receipt

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/fxamacker/cbor/v2"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/hwkey"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

func TestSignVerifyRoundTrip(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			p := newProvider(t, b)
			for name, mutate := range map[string]func(*Receipt){
				"with commitments":    func(*Receipt) {},
				"without commitments": func(r *Receipt) { r.CommitmentHash = []byte{} },
				"moe with remote experts": func(r *Receipt) {
					r.Units.ExpertTokens, r.ExpertsHash = 96, bytes.Repeat([]byte{5}, HashSize)
				},
				"binding token IDs": func(r *Receipt) {
					h := TokensHash([]uint32{1, 0xfffd, 2})
					r.TokensHash = h[:]
				},
			} {
				t.Run(name, func(t *testing.T) {
					want := newReceipt(t, p)
					mutate(want)
					env := sign(t, p, want)
					got, err := Verify(env, p.machine(), t0.Add(time.Minute))
					if err != nil {
						t.Fatalf("Verify: %v", err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("round trip changed the receipt:\n got %+v\nwant %+v", got, want)
					}
					if err := Check(got, observed(p)); err != nil {
						t.Fatalf("Check of an honest receipt: %v", err)
					}
					penv, pr, err := Parse(env)
					if err != nil || !reflect.DeepEqual(pr, want) || penv.Cert.Backend != string(b) {
						t.Fatalf("Parse: %v, %+v", err, pr)
					}
				})
			}
		})
	}
}

// reseal decodes env, lets edit change it, and re-encodes it without
// re-signing.
func reseal(t *testing.T, env []byte, edit func(e *identity.Envelope, r *Receipt)) []byte {
	t.Helper()
	e, err := identity.UnmarshalEnvelope(env, MaxEnvelopeSize)
	if err != nil {
		t.Fatal(err)
	}
	r, err := UnmarshalReceipt(e.Payload)
	if err != nil {
		t.Fatal(err)
	}
	edit(e, r)
	if e.Payload, err = cborx.Marshal(r); err != nil {
		t.Fatal(err)
	}
	out, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestVerifyRejects(t *testing.T) {
	p := newProvider(t, hwkey.BackendSoftware)
	other := newProvider(t, hwkey.BackendTPMSim)
	now := t0.Add(time.Minute)
	good := sign(t, p, newReceipt(t, p))
	otherEnv := sign(t, other, newReceipt(t, other))

	forOther := newReceipt(t, p)
	forOther.MachineID = other.machineBytes()
	namesOther, err := cborx.Marshal(forOther)
	if err != nil {
		t.Fatal(err)
	}
	otherPeer := newReceipt(t, p)
	otherPeer.ProviderPeer = other.sess.Cert.PeerID
	namesOtherPeer, _ := cborx.Marshal(otherPeer)
	shortNonce := newReceipt(t, p)
	shortNonce.Nonce = shortNonce.Nonce[:8]
	badNonce, _ := cborx.Marshal(shortNonce)
	payload, _ := newReceipt(t, p).Marshal()
	nonCanonical := append([]byte{0xb8, byte(payload[0] & 0x1f)}, payload[1:]...)

	cases := map[string]struct {
		env    []byte
		pinned identity.MachineID
		now    time.Time
		want   []error
	}{
		"altered units": {reseal(t, good, func(_ *identity.Envelope, r *Receipt) { r.Units.OutputTokens++ }), p.machine(), now,
			[]error{ErrBadSignature, identity.ErrBadSignature}},
		"altered output hash": {reseal(t, good, func(_ *identity.Envelope, r *Receipt) { r.OutputHash[0] ^= 1 }), p.machine(), now,
			[]error{ErrBadSignature}},
		"altered nonce": {reseal(t, good, func(_ *identity.Envelope, r *Receipt) { r.Nonce[3] ^= 1 }), p.machine(), now,
			[]error{ErrBadSignature}},
		"other machine's signature on this certificate": {reseal(t, good, func(e *identity.Envelope, _ *Receipt) {
			oe, _ := identity.UnmarshalEnvelope(otherEnv, MaxEnvelopeSize)
			e.Sig = oe.Sig
		}), p.machine(), now, []error{ErrBadSignature}},
		"other machine's certificate and key": {otherEnv, p.machine(), now, []error{ErrWrongMachine, identity.ErrMachineMismatch}},
		"wrong pinned machine":                {good, other.machine(), now, []error{ErrWrongMachine, identity.ErrMachineMismatch}},
		"heartbeat envelope": {sealRaw(t, p, "tenzro/v1/heartbeat", "tenzro.heartbeat.v1", payload), p.machine(), now,
			[]error{ErrWrongDomain, identity.ErrDomainMismatch}},
		"receipt domain, other payload type": {sealRaw(t, p, Domain, "tenzro.receipt.v0", payload), p.machine(), now,
			[]error{ErrWrongDomain}},
		"heartbeat relabelled as receipt": {reseal(t, sealRaw(t, p, "tenzro/v1/heartbeat", PayloadType, payload),
			func(e *identity.Envelope, _ *Receipt) { e.Domain = Domain }), p.machine(), now, []error{ErrBadSignature}},
		"expired certificate":           {good, p.machine(), t0.Add(2 * time.Hour), []error{ErrBadCertificate, identity.ErrCertExpired}},
		"not yet valid":                 {good, p.machine(), t0.Add(-time.Hour), []error{ErrBadCertificate, identity.ErrCertNotYetValid}},
		"not pinned":                    {good, identity.MachineID{}, now, []error{ErrNotPinned}},
		"receipt names another machine": {sealRaw(t, p, Domain, PayloadType, namesOther), p.machine(), now, []error{ErrSignerMismatch}},
		"receipt names another peer":    {sealRaw(t, p, Domain, PayloadType, namesOtherPeer), p.machine(), now, []error{ErrSignerMismatch}},
		"signed malformed receipt":      {sealRaw(t, p, Domain, PayloadType, badNonce), p.machine(), now, []error{ErrMalformed}},
		"signed non-canonical receipt":  {sealRaw(t, p, Domain, PayloadType, nonCanonical), p.machine(), now, []error{ErrMalformed, cborx.ErrNonCanonical}},
		"garbage":                       {[]byte("not cbor"), p.machine(), now, []error{ErrMalformed, identity.ErrMalformedEnvelope}},
		"truncated":                     {good[:len(good)-1], p.machine(), now, []error{ErrMalformed}},
		"oversized":                     {make([]byte, MaxEnvelopeSize+1), p.machine(), now, []error{ErrMalformed, cborx.ErrTooLarge}},
	}
	all := []error{ErrMalformed, ErrWrongDomain, ErrNotPinned, ErrWrongMachine, ErrBadCertificate, ErrBadSignature, ErrSignerMismatch}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, err := Verify(tc.env, tc.pinned, tc.now)
			if err == nil {
				t.Fatalf("accepted: %+v", r)
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("error %v does not wrap %v", err, w)
				}
			}
			for _, s := range all {
				if s != tc.want[0] && errors.Is(err, s) { //nolint:errorlint // compares two sentinels, not an error returned
					t.Errorf("error %v also wraps %v", err, s)
				}
			}
		})
	}
	if _, err := Verify(good, p.machine(), now); err != nil {
		t.Fatalf("the untampered envelope stopped verifying: %v", err)
	}
}

func TestVerifyRejectsUnknownReceiptField(t *testing.T) {
	p := newProvider(t, hwkey.BackendSoftware)
	payload, err := newReceipt(t, p).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	// Append a field 18 (sorted last; 13 to 17 are the optional experts
	// and tokens hashes, payer, settler and price) and bump the map
	// header from 12 pairs.
	if payload[0] != 0xac {
		t.Fatalf("receipt does not start with a 12-pair map header: %#x", payload[0])
	}
	extra := append(append([]byte{0xad}, payload[1:]...), 0x12, 0x00)
	_, err = Verify(sealRaw(t, p, Domain, PayloadType, extra), p.machine(), t0)
	var unk *cbor.UnknownFieldError
	if !errors.Is(err, ErrMalformed) || !errors.As(err, &unk) {
		t.Fatalf("unknown field: %v", err)
	}
}

func TestSignRejects(t *testing.T) {
	p := newProvider(t, hwkey.BackendSoftware)
	other := newProvider(t, hwkey.BackendSoftware)
	cases := map[string]struct {
		edit func(*Receipt)
		want error
	}{
		"other machine":       {func(r *Receipt) { r.MachineID = other.machineBytes() }, ErrSignerMismatch},
		"other peer":          {func(r *Receipt) { r.ProviderPeer = other.sess.Cert.PeerID }, ErrSignerMismatch},
		"short model":         {func(r *Receipt) { r.ModelID = r.ModelID[:31] }, ErrMalformed},
		"long nonce":          {func(r *Receipt) { r.Nonce = append(bytes.Clone(r.Nonce), 0) }, ErrMalformed},
		"no input commitment": {func(r *Receipt) { r.InputCommitment = nil }, ErrMalformed},
		"short output hash":   {func(r *Receipt) { r.OutputHash = r.OutputHash[:16] }, ErrMalformed},
		"odd commitment hash": {func(r *Receipt) { r.CommitmentHash = []byte{1} }, ErrMalformed},
		"odd experts hash":    {func(r *Receipt) { r.ExpertsHash = []byte{1} }, ErrMalformed},
		"odd tokens hash":     {func(r *Receipt) { r.TokensHash = []byte{1} }, ErrMalformed},
		"tokens hash without commitments": {func(r *Receipt) {
			r.TokensHash, r.CommitmentHash = bytes.Repeat([]byte{7}, HashSize), nil
		}, ErrMalformed},
		"no engine":         {func(r *Receipt) { r.Engine = "" }, ErrMalformed},
		"long engine":       {func(r *Receipt) { r.Engine = string(bytes.Repeat([]byte{'e'}, MaxEngineLen+1)) }, ErrMalformed},
		"invalid utf-8":     {func(r *Receipt) { r.FinishReason = "\xff" }, ErrMalformed},
		"negative time":     {func(r *Receipt) { r.TimeMs = -1 }, ErrMalformed},
		"payer, no settler": {func(r *Receipt) { r.Payer = make([]byte, AccountSize) }, ErrMalformed},
		"short settler": {func(r *Receipt) {
			r.Payer, r.Settler = make([]byte, AccountSize), make([]byte, AccountSize-1)
		}, ErrMalformed},
		"price, unpaid": {func(r *Receipt) { r.Price = 1 }, ErrMalformed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := newReceipt(t, p)
			tc.edit(r)
			if env, err := Sign(p.sess, r); !errors.Is(err, tc.want) {
				t.Fatalf("Sign = %d bytes, %v; want %v", len(env), err, tc.want)
			}
		})
	}
	if _, err := Sign(nil, newReceipt(t, p)); err == nil {
		t.Fatal("signed with a nil session")
	}
}

// TestPaidReceiptRoundTrip: the payer, settler and price a paid call's
// receipt names survive signing and verification; an unpaid receipt
// encodes without them, exactly as before they existed.
func TestPaidReceiptRoundTrip(t *testing.T) {
	p := newProvider(t, hwkey.BackendSoftware)
	unpaid, err := newReceipt(t, p).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if unpaid[0] != 0xac {
		t.Fatalf("an unpaid receipt is not a 12-pair map: %#x", unpaid[0])
	}
	r := newReceipt(t, p)
	r.Payer, r.Settler, r.Price = bytes.Repeat([]byte{1}, AccountSize), bytes.Repeat([]byte{2}, AccountSize), 1834
	env, err := Sign(p.sess, r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Verify(env, p.machine(), t0)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Paid() || !bytes.Equal(got.Payer, r.Payer) || !bytes.Equal(got.Settler, r.Settler) || got.Price != 1834 {
		t.Fatalf("verified %+v, want payer, settler and price 1834", got)
	}
}
