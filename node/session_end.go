package node

import (
	"context"
	"errors"
	"net/http"

	"github.com/tenzrod/tenzrod/node/openai"
	"github.com/tenzrod/tenzrod/router/gateway"
)

// EndSession is openai.SessionEnder: DELETE /v1/sessions/{id} ends the
// calling buyer's session at this gateway.
func (b gatewayBackend) EndSession(ctx context.Context, header http.Header, id string) (any, error) {
	payer, err := b.buyers.account(header)
	if err != nil {
		return nil, &openai.Error{Status: http.StatusUnauthorized, Type: "invalid_request_error", Code: "invalid_api_key", Message: err.Error()}
	}
	out, err := b.gw.EndSession(ctx, id, payer)
	if err != nil {
		return nil, openaiError(err)
	}
	return out, nil
}

// openaiError is a gateway error as the OpenAI routes answer it; any
// other error passes unchanged (a 500).
func openaiError(err error) error {
	var ge *gateway.Error
	if errors.As(err, &ge) {
		return &openai.Error{Status: ge.Status, Type: errorType(ge.Status), Code: ge.Code, Message: ge.Message, Param: ge.Param,
			RetryAfter: int(ge.RetryAfter.Seconds())}
	}
	return err
}
