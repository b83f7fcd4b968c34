// Package identitytest makes real machine identities for the tests of the
// packages that sign or verify with them (gossip, the stream protocols, the
// gateway, the provider): a software-backed hardware key in a temporary
// directory, a fresh libp2p peer key, and a session certified for that
// peer. Nothing is faked; only the key store is the software one.
package identitytest
