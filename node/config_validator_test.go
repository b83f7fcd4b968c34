package node

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/node/validator"
)

// TestValidatorModelsConfig: [[validator.models]] survive the written
// config, and bad entries are refused naming their keys.
func TestValidatorModelsConfig(t *testing.T) {
	cfg := testConfig(t, RoleValidator, "software", nil)
	cfg.Validator.Models = []validator.ModelConfig{{Name: "devnet", Dir: "models/devnet", ID: strings.Repeat("ab", 32)}}
	if err := WriteConfig(cfg, false); err != nil {
		t.Fatal(err)
	}
	got, err := Load(cfg.Home)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Validator, cfg.Validator) {
		t.Fatalf("round trip: got %+v, want %+v", got.Validator, cfg.Validator)
	}
	cfg.Validator.Models = append(cfg.Validator.Models, validator.ModelConfig{Name: "nodir"}, validator.ModelConfig{Dir: "x", ID: "zz"})
	err = cfg.Validate()
	for _, key := range []string{"validator.models[1].dir", "validator.models[2].id"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("validate: %v, want it to name %s", err, key)
		}
	}
	if err != nil && strings.Contains(err.Error(), "validator.models[0]") {
		t.Errorf("a good entry refused: %v", err)
	}
}
