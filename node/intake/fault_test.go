package intake

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestFault: the gate's own refusal is the server's (retry), a slow or
// broken body the client's, and a body over a handler's cap too large.
func TestFault(t *testing.T) {
	_, overCap := io.ReadAll(http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(strings.NewReader("too long")), 3))
	for _, c := range []struct {
		err  error
		want ReadFault
	}{
		{errBodyBusy{slots: 2, share: true}, FaultBusy},
		{fmt.Errorf("read: %w", errBodyBusy{slots: 8, wait: 1}), FaultBusy},
		{errBodySlow, FaultClient},
		{errors.New("connection reset"), FaultClient},
		{overCap, FaultTooLarge},
	} {
		if got := Fault(c.err); got != c.want {
			t.Errorf("%v: %v, want %v", c.err, got, c.want)
		}
	}
}
