// Package receipt defines the signed receipt a provider returns with every
// answer, the checks a gateway applies to it, the wire-bounded billing caps
// and the payment record that binds what was paid.
//
// # Receipts
//
// A Receipt names the catalog model, the engine, the serving machine and
// libp2p peer, the request nonce, a commitment to the exact input, the hash
// of the exact output text, the units the provider claims, the sampling
// parameters, the logit-commitment hash (when requested), the finish reason
// and the generation time. Sign encodes it in Core Deterministic CBOR
// (receipts/cborx) with small integer keys and seals it in an
// identity.Envelope of domain Domain and payload type PayloadType with the
// provider's certified session key, so a receipt signature can never be
// replayed as a heartbeat or announcement, nor the reverse.
//
// Verify decodes an envelope and checks, in order: the envelope encoding,
// its domain and payload type, the certificate chain up to the machine the
// provider's registration pins (a zero pin is refused: an unpinned receipt
// proves nothing), the session signature, the receipt payload's canonical
// encoding and field sizes, and that the receipt names the same machine and
// peer as its certificate. Each failure wraps its own sentinel error;
// identity's sentinels (ErrCertExpired, ...) stay reachable with errors.Is.
//
// Check then compares a verified receipt with what the gateway itself saw:
// nonce, input commitment, output hash, model, machine and max_tokens. All
// mismatches are reported together, each wrapping its own sentinel.
//
// # Commitments
//
// InputCommitment is SHA-256 over InputDomain followed by the deterministic
// CBOR of the model ID, the chat flag, the messages, the raw prompt, the
// continuation text and every sampling parameter (floats as their IEEE-754
// bits, with -0 folded into 0 and every NaN into one NaN). Text is encoded
// as CBOR byte strings, so any input, valid UTF-8 or not, has exactly one
// commitment. OutputHash is the plain SHA-256 of the output text's bytes,
// so anyone holding the answer can recompute it with sha256sum.
//
// # Billing caps
//
// Cap bills each dimension at most what crossed the wire (see Cap for the
// exact bounds). A receipt is a claim; Cap turns it into what the buyer pays.
//
// # Bills and payment records
//
// A Bill is what a gateway billed for one call, kept in its own store: the
// request digest (RequestDigest over nonce, input commitment and model),
// the quote digest, the payer, the provider, the receipt envelope's hash,
// the billed units, the price breakdown and the price. Its Digest is
// SHA-256 over BillDomain and its deterministic CBOR.
//
// A PaymentRecord is what the chain settles: the gateway (the settler)
// signs RecordSigningBytes with SignRecord, the provider's collector and
// the ledger check it with VerifySig, and RecordDigest names it. It lives
// here, not in the ledger, so the wire protocols and the gateway speak of
// payments without importing the state machine.
package receipt
