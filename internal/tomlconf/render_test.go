package tomlconf

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// TestRenderValuesReadBack: strings with quotes, escapes, control bytes
// and non-ASCII, floats, durations and lists are written as TOML the
// decoder reads back to the same values.
func TestRenderValuesReadBack(t *testing.T) {
	type inner struct {
		S string `toml:"s"`
	}
	type doc struct {
		S   string        `toml:"s" comment:"a string"`
		F   float64       `toml:"f"`
		G   float64       `toml:"g"`
		D   time.Duration `toml:"d"`
		L   []string      `toml:"l"`
		U   []uint32      `toml:"u"`
		In  inner         `toml:"in"`
		Arr []inner       `toml:"arr"`
	}
	in := doc{S: "q\"b\\s\n\t\x01\x7fé☃", F: 2, G: 1e-9, D: 90 * time.Second, L: []string{"a", `"b"`}, U: []uint32{1, 4},
		In: inner{S: "x"}, Arr: []inner{{S: "y"}, {S: "z"}}}
	b, err := Render("header", in, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out doc
	if _, err := toml.Decode(string(b), &out); err != nil {
		t.Fatalf("decode: %v\n%s", err, b)
	}
	if out.S != in.S || out.F != in.F || out.G != in.G || out.D != in.D || strings.Join(out.L, ",") != strings.Join(in.L, ",") ||
		len(out.U) != 2 || out.U[1] != 4 || out.In != in.In || len(out.Arr) != 2 || out.Arr[1] != in.Arr[1] {
		t.Fatalf("read back %+v, want %+v\n%s", out, in, b)
	}
	if !strings.Contains(string(b), "# a string\ns = ") || !strings.Contains(string(b), `d = "1m30s"`) {
		t.Fatalf("comment or duration form missing:\n%s", b)
	}
	for v, want := range map[float64]string{math.Inf(1): "inf", math.Inf(-1): "-inf", 3: "3.0", 0.5: "0.5"} {
		if got := tomlFloat(v); got != want {
			t.Errorf("tomlFloat(%v) = %s, want %s", v, got, want)
		}
	}
}

// TestRenderRefusesWhatTOMLLacks: a map or an unsigned value beyond
// TOML's integers is an error, never a file that reads back otherwise.
func TestRenderRefusesWhatTOMLLacks(t *testing.T) {
	if _, err := Render("", struct {
		M map[string]int `toml:"m"`
	}{}, nil); err == nil {
		t.Error("a map was rendered")
	}
	if _, err := Render("", struct {
		U uint64 `toml:"u"`
	}{U: math.MaxUint64}, nil); err == nil || !strings.Contains(err.Error(), "u:") {
		t.Errorf("a uint64 beyond int64: %v", err)
	}
}

// TestDecodeNamesUnknownKeys: a key no field takes is refused with its
// table's path; the fields it does take are read over the defaults.
func TestDecodeNamesUnknownKeys(t *testing.T) {
	type doc struct {
		A  int `toml:"a"`
		In struct {
			B string `toml:"b"`
		} `toml:"in"`
	}
	v := doc{A: 7}
	if err := Decode([]byte("[in]\nb = \"x\"\n"), &v); err != nil || v.A != 7 || v.In.B != "x" {
		t.Fatalf("decode: %v %+v", err, v)
	}
	err := Decode([]byte("a = 1\n[in]\nc = 2\n"), &v)
	if err == nil || !strings.Contains(err.Error(), "unknown key(s): in.c") {
		t.Fatalf("unknown key: %v", err)
	}
}
