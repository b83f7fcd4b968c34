// Package prefs is a buyer's provider preferences in OpenRouter's shape:
// the top-level `provider` object of an OpenAI request (unknown fields
// ignored, as OpenRouter does) and the same fields inside `tenzro`
// (unknown fields refused). One struct and one checker serve both, so a
// preference means the same wherever it is given; the gateway applies it
// to every attempt, hedge and failover of the request.
package prefs
