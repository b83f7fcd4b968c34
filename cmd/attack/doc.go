// Command attack runs node/attacktest's adversarial scenarios against a
// running network through one gateway and prints a held/BROKE table; it
// exits 1 if any scenario broke or could not run. scripts/attack wraps it
// for a devnet: the gateway URL, the buyer's token and keys come from the
// devnet's devnet.json unless given as flags.
//
// It is a command of its own, not a tenzrod subcommand, so the binary
// operators run does not ship tools for front-running and flooding, and
// the attack code can grow without touching tenzrod's command tree.
package main
