package p2p

import (
	"errors"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
)

// Test-only options: seams for the package tests, kept out of the binary.

// withKey makes New use key as the peer identity instead of Config.KeyFile
// (which is then neither read nor written).
func withKey(key crypto.PrivKey) Option {
	return func(o *options) error {
		if key == nil {
			return errors.New("withKey: nil key")
		}
		o.key = key
		return nil
	}
}

// withTiming replaces the protocol timers (tests).
func withTiming(t timing) Option {
	return func(o *options) error {
		if t.dialTimeout <= 0 || t.retryInterval <= 0 || t.maxBackoff <= 0 ||
			t.reprovideInterval <= 0 || t.opTimeout <= 0 {
			return errors.New("withTiming: all durations must be positive")
		}
		o.timing = t
		return nil
	}
}

// withLibp2pOptions appends raw libp2p options (tests: connection gaters).
func withLibp2pOptions(opts ...libp2p.Option) Option {
	return func(o *options) error {
		o.libp2p = append(o.libp2p, opts...)
		return nil
	}
}
