package nodetest

import "io"

// ErrBusy is a body read the server refuses for now, as the node's body
// gate refuses one when no slot is free: Temporary, so a handler answers
// "retry" and not "bad request".
var ErrBusy error = busyError{}

type busyError struct{}

func (busyError) Error() string   { return "all slots busy" }
func (busyError) Temporary() bool { return true }

// FailingBody is a request body whose every read fails with err.
func FailingBody(err error) io.Reader { return failingBody{err} }

type failingBody struct{ err error }

func (b failingBody) Read([]byte) (int, error) { return 0, b.err }
