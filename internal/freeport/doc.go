// Package freeport hands out loopback TCP ports that stay free until the
// caller binds them.
//
// Asking the kernel for port 0 and closing the listener is racy: the port
// it returns lies in the ephemeral range, so any outgoing connection or
// port-0 listener on the machine may take it before the caller binds it
// again (CI saw "bind: address already in use" under `go test ./...`).
// freeport picks ports below the ephemeral range instead, where the kernel
// never hands out ports on its own, and reserves each with a lock file so
// that parallel test binaries, devnets and chaos runs on one machine never
// pick the same port.
package freeport
