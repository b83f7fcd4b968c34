package infer

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p/p2ptest"
)

// The token marked Last is held and written in one piece with the final
// frame: the client does not see it before the handler has finished, and
// then sees it, unchanged and in order, before the final frame.
func TestLastTokenTravelsWithTheFinalFrame(t *testing.T) {
	client, server := p2ptest.Pair(t)
	release := make(chan struct{})
	final := &FinalFrame{FinishReason: "length", CompletionTokens: 2, Receipt: []byte("r")}
	serve(t, server, ServerConfig{}, func(ctx context.Context, _ *Request, _ peer.ID, send func(*TokenFrame) error) (*FinalFrame, error) {
		if err := send(&TokenFrame{Text: "a", TokenIDs: []int{1}}); err != nil {
			return nil, err
		}
		if err := send(&TokenFrame{Text: "b", TokenIDs: []int{2}, Last: true}); err != nil {
			return nil, err
		}
		<-release // signing the receipt, say
		return final, nil
	})
	got := make(chan *TokenFrame, 4)
	done := make(chan error, 1)
	var fin *FinalFrame
	go func() {
		var err error
		fin, _, err = Call(context.Background(), client, server.ID(), validRequest(), ClientConfig{}, func(tf *TokenFrame) error {
			got <- tf
			return nil
		})
		done <- err
	}()
	if tf := <-got; tf.Text != "a" {
		t.Fatalf("first token %+v", tf)
	}
	select {
	case tf := <-got:
		t.Fatalf("the last token %+v arrived before the final frame was ready", tf)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if tf := <-got; !reflect.DeepEqual(tf, &TokenFrame{Text: "b", TokenIDs: []int{2}}) {
		t.Fatalf("last token %+v", tf)
	}
	if !reflect.DeepEqual(fin, final) {
		t.Fatalf("final %+v, want %+v", fin, final)
	}
}

// A held last token is still delivered when the handler fails after it
// (then the error frame) or sends again after it (then both, in order).
func TestHeldLastTokenIsNeverLost(t *testing.T) {
	client, server := p2ptest.Pair(t)
	serve(t, server, ServerConfig{}, func(ctx context.Context, req *Request, _ peer.ID, send func(*TokenFrame) error) (*FinalFrame, error) {
		if err := send(&TokenFrame{Text: "x", Last: true}); err != nil {
			return nil, err
		}
		if req.Model == "fail" {
			return nil, &ErrorFrame{Status: http.StatusBadRequest, Code: "refused", Message: "no"}
		}
		if err := send(&TokenFrame{Text: "y"}); err != nil {
			return nil, err
		}
		return &FinalFrame{FinishReason: "stop"}, nil
	})
	for _, m := range []string{"fail", "more"} {
		req := validRequest()
		req.Model = m
		var texts string
		_, _, err := Call(context.Background(), client, server.ID(), req, ClientConfig{}, func(tf *TokenFrame) error {
			texts += tf.Text
			return nil
		})
		switch m {
		case "fail":
			var ef *ErrorFrame
			if !errors.As(err, &ef) || ef.Code != "refused" || texts != "x" {
				t.Fatalf("fail: tokens %q, err %v; want \"x\" then the refusal", texts, err)
			}
		case "more":
			if err != nil || texts != "xy" {
				t.Fatalf("more: tokens %q, err %v; want \"xy\"", texts, err)
			}
		}
	}
}
