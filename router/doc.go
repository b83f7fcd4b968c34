// Package router keeps the node's view of the provider market and, as later
// parts land, routes requests over it.
//
// The provider table is fed by verified gossip (announcements and
// heartbeats) and by the DHT (providers found by model ID before gossip has
// shown them). It applies the failure-detection rule of DESIGN.md: a
// provider with no clean heartbeat for DownAfter (6 s, three heartbeat
// intervals), or whose latest heartbeat says degraded, is down until its
// next clean heartbeat. Time comes from an injected clock so the rule is
// tested without sleeping.
package router
