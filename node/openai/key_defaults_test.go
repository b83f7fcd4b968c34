package openai

import (
	"slices"
	"testing"

	"github.com/tenzrod/tenzrod/router/buyerkeys"
	"github.com/tenzrod/tenzrod/router/gateway"
	"github.com/tenzrod/tenzrod/router/prefs"
)

// TestKeyDefaultsAndModels: a key's default preferences apply only when
// the request gives none, and fallback models the key may not call are
// dropped from the request.
func TestKeyDefaultsAndModels(t *testing.T) {
	k := &buyerkeys.Key{Settings: buyerkeys.Settings{
		Preferences: []byte(`{"ignore":["p-bad"],"future":1}`),
		Models:      []string{"a", "c"},
	}}
	kc := keyCall{key: k}
	got, e := kc.defaults(nil)
	if e != nil || got == nil || !slices.Equal(got.Ignore, []string{"p-bad"}) {
		t.Fatalf("key defaults = %+v, %v; want ignore [p-bad]", got, e)
	}
	own := &prefs.Preferences{Only: []string{"p-good"}}
	if got, e := kc.defaults(own); e != nil || got != own {
		t.Fatalf("the request's own preferences replaced by the key's: %+v, %v", got, e)
	}
	if got, e := (keyCall{}).defaults(nil); e != nil || got != nil {
		t.Fatalf("a config buyer's call got preferences %+v, %v", got, e)
	}
	k.Preferences = []byte(`{"sort":"speed"}`)
	if _, e := kc.defaults(nil); e == nil {
		t.Fatal("unparseable stored preferences used")
	}
	gr := &gateway.Request{Model: "a", Models: []string{"b", "c", "d"}}
	kc.limit(gr)
	if !slices.Equal(gr.Models, []string{"c"}) {
		t.Fatalf("fallback models %v, want only the allowed [c]", gr.Models)
	}
}
