// Package nodetest is the harness of tenzrod's multi-node tests, in the
// spirit of celestia-node's swamp: a network of members started in order
// and stopped in reverse when the test ends, the one polling helper every
// test waits with, loopback addresses and free ports, the generated model
// every test provider serves (made once per test binary), go-libp2p's
// mocknet for tests that need many hosts, and a request body that fails
// the way the node's body gate refuses a read (ErrBusy, FailingBody).
//
// It does not import package node, so node's own tests use it without an
// import cycle: a test supplies the factory that builds its members
// (*node.Node for the node tests, anything with Start and Stop elsewhere).
package nodetest
