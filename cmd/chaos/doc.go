// Command chaos is the network's soak test (issue #18): it starts a devnet
// of real tenzrod processes (validators, providers, gateways and a
// laptop-style join gateway), drives a fixed offered load of paid chat
// calls through every gateway, and meanwhile kills, stalls, restarts and
// floods nodes on a seeded schedule. It records every call, and once
// settlement quiesces it checks the history against the invariants a
// payment network must keep: complete answers equal to what its own
// embedded engine computes, every payment record settled exactly once,
// money conserved, no receipt lost, provider status matching reality and
// one app hash on every live node. It prints a report whose last line is
// the verdict and exits non-zero on any violation.
//
// Built with the chaosbroken tag, the checker's view of the chain drops a
// record settled after a provider restart, the way a collector losing a
// record on restart would; the checker must then fail (TestChaosBroken).
package main
