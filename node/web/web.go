package web

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed assets
var assets embed.FS

// CSP is the page's Content-Security-Policy: scripts, styles, images and
// connections from the node's own origin only, no inline script, and the
// page cannot be framed.
const CSP = "default-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'"

// Mount registers the page (GET /) and its assets (GET /assets/...) on mux.
func Mount(mux *http.ServeMux) {
	sub, err := fs.Sub(assets, "assets")
	if err != nil { // the embedded tree always has it
		panic(err)
	}
	files := http.StripPrefix("/assets/", http.FileServerFS(sub))
	mux.Handle("GET /{$}", secured(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, sub, "index.html")
	})))
	mux.Handle("GET /assets/", secured(files))
}

// secured adds the headers every page response carries. no-cache makes a
// browser revalidate after an upgrade of the node instead of running an
// old script against a new API.
func secured(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", CSP)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cache-Control", "no-cache")
		h.ServeHTTP(w, r)
	})
}
