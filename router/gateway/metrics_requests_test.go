package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
)

// TestRequestLabelsBounded: a buyer naming a new model in every request
// grows the label set only to maxLabelValues; past it every new name is
// "other", and names already admitted keep their own series.
func TestRequestLabelsBounded(t *testing.T) {
	var b boundedLabels
	b.seen = map[string]bool{}
	for i := range maxLabelValues {
		if v := b.value(fmt.Sprint("m", i)); v != fmt.Sprint("m", i) {
			t.Fatalf("value %d admitted as %q", i, v)
		}
	}
	if v := b.value("one-too-many"); v != otherLabel {
		t.Fatalf("past the bound: %q", v)
	}
	if v := b.value("m7"); v != "m7" {
		t.Fatalf("an admitted value past the bound: %q", v)
	}
	if v := b.value(""); v != otherLabel {
		t.Fatalf("empty value: %q", v)
	}
}

func TestStatusOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, http.StatusOK},
		{&Error{Status: http.StatusPaymentRequired}, http.StatusPaymentRequired},
		{fmt.Errorf("route: %w", &Error{Status: http.StatusServiceUnavailable}), http.StatusServiceUnavailable},
		{fmt.Errorf("%w before the first token", errBuyerGone), 499},
		{context.Canceled, 499},
		{errors.New("boom"), http.StatusInternalServerError},
	} {
		if got := statusOf(c.err); got != c.want {
			t.Errorf("statusOf(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}
