// Package routertest holds what the tests of the router and of the
// gateway share: a chain registry kept in maps, which a test edits while
// the table reads it.
package routertest
