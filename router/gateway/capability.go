package gateway

import (
	"fmt"
	"net/http"

	"github.com/tenzrod/tenzrod/router"
)

// capable keeps the offers that announce what req uses (tools,
// response_format); with none left, a 503 naming the missing capability.
func capable(offers []router.Offer, req *Request) ([]router.Offer, error) {
	kept, lacking := router.Capable(offers, req.Sampling)
	if len(kept) == 0 && lacking != "" {
		return nil, &Error{Status: http.StatusServiceUnavailable, Code: "unsupported_parameter", Param: lacking,
			Message: fmt.Sprintf("no provider of %s announces support for %s", req.Model, lacking)}
	}
	return kept, nil
}
