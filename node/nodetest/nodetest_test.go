package nodetest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
)

type fake struct {
	name    string
	log     *[]string
	failing bool
}

func (f *fake) Start(context.Context) error {
	if f.failing {
		return errors.New("refused")
	}
	*f.log = append(*f.log, "start "+f.name)
	return nil
}

func (f *fake) Stop(context.Context) error {
	*f.log = append(*f.log, "stop "+f.name)
	return nil
}

func (f *fake) Bootstrap() []string { return []string{"addr-of-" + f.name} }

// TestBuildOrderAndBootstrap: members start validators first, each later
// one bootstraps from the first, and they stop in reverse order.
func TestBuildOrderAndBootstrap(t *testing.T) {
	var log []string
	var boots [][]string
	t.Run("net", func(t *testing.T) {
		n := Build(t, Spec{Validators: 1, Providers: 2, Gateways: 1}, func(_ testing.TB, r Role, i int, boot []string) *fake {
			boots = append(boots, boot)
			return &fake{name: string(r) + string(rune('0'+i)), log: &log}
		})
		if len(n.All()) != 4 || n.Gateways[0].name != "gateway0" {
			t.Fatalf("members %+v", n.All())
		}
	})
	want := []string{"start validator0", "start provider0", "start provider1", "start gateway0",
		"stop gateway0", "stop provider1", "stop provider0", "stop validator0"}
	if !slices.Equal(log, want) {
		t.Fatalf("lifecycle %v, want %v", log, want)
	}
	if boots[0] != nil || boots[3][0] != "addr-of-validator0" {
		t.Fatalf("bootstrap lists %v", boots)
	}
}

func TestMocknetHostsAreConnected(t *testing.T) {
	hs := Mocknet(t, 3)
	for _, h := range hs {
		if n := len(h.Network().Peers()); n != 2 {
			t.Fatalf("%s has %d peers, want 2", h.ID(), n)
		}
		if h.ID() == peer.ID("") {
			t.Fatal("host without ID")
		}
	}
}
