package sessioncache_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p/p2ptest"
	"github.com/tenzrod/tenzrod/p2p/sessioncache"
)

// TestBehindIsARetry: a successor whose chain has not reached the
// assignment's stream answers CodeRetry (the gateway asks again), while
// any other funding refusal stays a refusal for good.
func TestBehindIsARetry(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		code uint32
	}{
		{"behind", fmt.Errorf("provider: stream x committed at height 9: %w: at height 7", sessioncache.ErrBehind), sessioncache.CodeRetry},
		{"unfunded", errors.New("provider: stream x does not exist"), sessioncache.CodeRefused},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSuccessor(t, func(context.Context, peer.ID, sessioncache.Assignment) error { return c.err })
			sh := s.host(t)
			gw, primary := newMachine(t), newMachine(t)
			gh := gw.host(t)
			p2ptest.Connect(t, gh, sh)
			srv, err := sessioncache.NewServer(sh, s.hold, sessioncache.ServerConfig{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(srv.Stop)
			err = sessioncache.Assign(t.Context(), gh, sh.ID(), assignment("s", primary))
			var r *sessioncache.RefusedError
			if !errors.As(err, &r) || r.Code != c.code {
				t.Fatalf("answer %v, want code %d", err, c.code)
			}
			if s.hold.Len() != 0 {
				t.Fatal("a refused assignment is held")
			}
		})
	}
}
