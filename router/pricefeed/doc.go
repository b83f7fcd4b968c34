// Package pricefeed aggregates validators' price observations (the gossip
// price-obs topic) into a price feed per (provider, model, window).
//
// Every number in an Entry's observed columns comes from observations that
// active validators signed about calls they routed or probed, measured on
// their own clocks: the price they were charged, the latency they saw, the
// token counts their gateways billed (capped at the wire). Nothing a
// provider announced enters them. An entry is Attested once at least
// MinObservers (2) distinct validators have observed the provider's model in
// the window; a single validator alone never attests one.
//
// Unit price: a call's price per unit is the micro-units it was charged
// divided by the tokens it was billed for (input + output), over successful
// calls that billed at least one token; the feed gives its median and p95.
// Latency p50/p95 is over successful calls; the success rate over all.
//
// The provider's hardware class and region appear beside the observed
// columns in Claims, labelled as the provider's own claims (from its
// announcement, as the provider table holds it), never mixed into them.
package pricefeed
