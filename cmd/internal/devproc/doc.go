// Package devproc drives the tenzrod binary as real processes from
// outside, for the two users that do: the chaos soak (cmd/chaos) and
// cmd/tenzrod's end-to-end tests. Both build the binary, start `tenzrod
// devnet` and wait for its manifest, restart nodes from their homes with
// their output appended to the home's log, make paid chat calls and read
// their server-sent events, and stop the devnet; one copy of each keeps
// the soak and the tests from drifting apart on how a node is run.
package devproc
