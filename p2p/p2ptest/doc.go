// Package p2ptest holds the helpers the tests of the stream protocols and
// of gossip share: loopback libp2p hosts, connected pairs, and the value of
// a labelled counter. It does not import p2p, so p2p's own tests can use it.
package p2ptest
