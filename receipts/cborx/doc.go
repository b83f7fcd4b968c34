// Package cborx holds the project's shared CBOR modes for every signed
// payload and stream frame.
//
// Encoding uses RFC 8949 Core Deterministic Encoding (sorted map keys,
// shortest integer and float forms, no indefinite lengths, no tags), and nil
// slices and maps encode as empty containers, so that nil and empty values
// produce identical bytes. Decoding is strict: duplicate map keys, unknown
// struct fields, indefinite-length items, tags and trailing bytes are errors,
// and every decode is bounded by a caller-supplied maximum input size.
package cborx
