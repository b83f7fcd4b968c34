package intake

import (
	"errors"
	"net/http"
)

// ReadFault says whose a failed request-body read is, so that every API
// the node serves answers it alike.
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

// Fault classifies err, a failed read of a body under http.MaxBytesReader.
func Fault(err error) ReadFault {
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
