// Package netlab builds a small internet out of Linux network namespaces
// for tests and scripts/wan: public hosts on one "internet" bridge, and
// homes whose router namespace NATs a host namespace behind it, either
// hole-punchable (endpoint-independent, port-preserving MASQUERADE) or
// not (a fresh random port per connection). Processes run inside with
// `ip netns exec`; a test reaches them through sockets opened inside a
// namespace (Dial, HTTPClient), so nothing is ever linked to the
// machine's own namespace and nothing can leave the machine.
//
// Everything a Lab makes carries its prefix and lives inside namespaces
// it names with it; deleting those namespaces removes every veth, bridge
// and iptables rule with them. New sweeps leftovers of a crashed run
// first, Close deletes all, and Leftovers lets a test assert that nothing
// remains. It needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN); without it New
// fails and says so, for tests must not skip.
package netlab
