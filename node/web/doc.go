// Package web is the node's live page, served at GET / of every node's API
// port: plain HTML, CSS and JavaScript embedded in the binary, with no
// framework, no CDN and no build step. The page is a client of the node's
// JSON-RPC API only (one batch of calls a second, paused while its tab is
// hidden), and its Content-Security-Policy keeps every request on the
// node's own origin. Sections a node has no data for (a provider routes
// nothing, a node without a chain has no validators) say so quietly.
//
// The browser tests drive headless Chromium (chromedp) against a real
// in-process network; they need a chromium binary (/usr/bin/chromium, or
// one found through PATH, or $TENZRO_CHROMIUM) and fail, never skip,
// without it.
package web
