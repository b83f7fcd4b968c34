package gossip

import "encoding/hex"

// HexBytes is a byte string that travels as a CBOR byte string and shows
// as lowercase hex in JSON (the API, the shell's tail), where base64 would
// make machine and model IDs unrecognisable.
type HexBytes []byte

// MarshalText encodes b as hex.
func (b HexBytes) MarshalText() ([]byte, error) {
	out := make([]byte, hex.EncodedLen(len(b)))
	hex.Encode(out, b)
	return out, nil
}

// UnmarshalText decodes hex.
func (b *HexBytes) UnmarshalText(text []byte) error {
	out := make([]byte, hex.DecodedLen(len(text)))
	if _, err := hex.Decode(out, text); err != nil {
		return err
	}
	*b = out
	return nil
}
