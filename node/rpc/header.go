package rpc

import (
	"context"
	"net/http"
)

type headerKey struct{}

// WithHeader carries an HTTP request's headers to the methods it calls:
// a method reading what belongs to one buyer checks the caller's bearer
// token, as the OpenAI routes do.
func WithHeader(ctx context.Context, h http.Header) context.Context {
	return context.WithValue(ctx, headerKey{}, h)
}

// Header returns the headers of the HTTP request a method runs for (an
// empty header outside one).
func Header(ctx context.Context) http.Header {
	if h, ok := ctx.Value(headerKey{}).(http.Header); ok {
		return h
	}
	return http.Header{}
}
