package rpc

import (
	"errors"
	"net/http"
)

// ReadFault says whose a failed request-body read is, so that every API
// the node serves (JSON-RPC here, the OpenAI routes) answers it alike. It
// lives in this leaf because every API imports it; node/intake's gate
// marks its own refusals Temporary.
type ReadFault int

const (
	// FaultTooLarge is a body over the handler's cap (http.MaxBytesReader).
	FaultTooLarge ReadFault = iota + 1
	// FaultBusy is a read the server refused for now (the body gate had no
	// slot; its error is Temporary): the client should retry.
	FaultBusy
	// FaultClient is a body the client broke off or sent too slowly.
	FaultClient
)

// BodyFault classifies err, a failed read of a body under http.MaxBytesReader.
func BodyFault(err error) ReadFault {
	var mb *http.MaxBytesError
	var tmp interface{ Temporary() bool }
	switch {
	case errors.As(err, &mb):
		return FaultTooLarge
	case errors.As(err, &tmp) && tmp.Temporary():
		return FaultBusy
	}
	return FaultClient
}
