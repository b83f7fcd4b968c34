package buyerkeys

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/prefs"
)

// Bounds of a key's settings and of its stored record.
const (
	MaxLabel         = 128
	MaxModels        = 64
	MaxModelName     = 256
	MaxPreferences   = 8 << 10
	MaxRatePerMinute = 100_000
	MaxConcurrent    = 10_000
	maxKeyRecord     = 32 << 10
)

// Errors, wrapped with context.
var (
	ErrInvalid  = errors.New("buyerkeys: invalid key setting")
	ErrNotFound = errors.New("buyerkeys: no such key")
	ErrCorrupt  = errors.New("buyerkeys: corrupt stored record")
)

// Settings are what the operator chooses for a key; zero means no limit
// (an empty BudgetDuration: the budget never resets).
type Settings struct {
	Label string `cbor:"1,keyasint,omitempty" json:"label"`
	// MaxBudget caps the spend per period, in micro-units.
	MaxBudget uint64 `cbor:"2,keyasint,omitempty" json:"max_budget,omitempty"`
	// BudgetDuration is the period after which spend resets: 1h, 1d, 30d …
	BudgetDuration string `cbor:"3,keyasint,omitempty" json:"budget_duration,omitempty"`
	// MaxPerRequest caps one call's worst-case price, in micro-units.
	MaxPerRequest uint64   `cbor:"4,keyasint,omitempty" json:"max_per_request,omitempty"`
	MaxConcurrent int      `cbor:"5,keyasint,omitempty" json:"max_concurrent,omitempty"`
	RatePerMinute int      `cbor:"6,keyasint,omitempty" json:"rate_per_minute,omitempty"`
	Models        []string `cbor:"7,keyasint,omitempty" json:"models,omitempty"`
	// Preferences are the key's default provider preferences, a JSON
	// object kept as sent: the router's preference parser reads it.
	Preferences json.RawMessage `cbor:"8,keyasint,omitempty" json:"preferences,omitempty"`
}

// Key is one stored key: its settings, who pays for its calls and its
// token's SHA-256 (the secret itself is shown once, at creation).
type Key struct {
	Settings
	ID          string `cbor:"20,keyasint" json:"id"`
	TokenSHA256 string `cbor:"21,keyasint" json:"-"`
	Payer       string `cbor:"22,keyasint" json:"payer"`
	Revoked     bool   `cbor:"23,keyasint,omitempty" json:"revoked,omitempty"`
	CreatedMs   int64  `cbor:"24,keyasint" json:"created_ms"`
}

var (
	idRE      = regexp.MustCompile(`^key_[0-9a-f]{16}$`)
	accountRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	periodRE  = regexp.MustCompile(`^([1-9][0-9]{0,4})([mhd])$`)
)

// ParsePeriod reads a budget duration: a count of minutes, hours or days
// ("90m", "1h", "1d", "30d"); "" is no period (0).
func ParsePeriod(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	m := periodRE.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%w: budget_duration %q: want a count and a unit m, h or d (1h, 1d, 30d)", ErrInvalid, s)
	}
	n, _ := strconv.Atoi(m[1]) // the pattern bounds it to 5 digits
	unit := map[string]time.Duration{"m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[m[2]]
	return time.Duration(n) * unit, nil
}

// Validate checks the settings.
func (s *Settings) Validate() error {
	switch {
	case len(s.Label) > MaxLabel || !utf8.ValidString(s.Label):
		return fmt.Errorf("%w: label: at most %d bytes of UTF-8", ErrInvalid, MaxLabel)
	case s.MaxConcurrent < 0 || s.MaxConcurrent > MaxConcurrent:
		return fmt.Errorf("%w: max_concurrent: 0..%d", ErrInvalid, MaxConcurrent)
	case s.RatePerMinute < 0 || s.RatePerMinute > MaxRatePerMinute:
		return fmt.Errorf("%w: rate_per_minute: 0..%d", ErrInvalid, MaxRatePerMinute)
	case len(s.Models) > MaxModels:
		return fmt.Errorf("%w: models: at most %d", ErrInvalid, MaxModels)
	case len(s.Preferences) > MaxPreferences:
		return fmt.Errorf("%w: preferences: at most %d bytes", ErrInvalid, MaxPreferences)
	}
	if _, err := ParsePeriod(s.BudgetDuration); err != nil {
		return err
	}
	for _, m := range s.Models {
		if m == "" || len(m) > MaxModelName || !utf8.ValidString(m) {
			return fmt.Errorf("%w: models: a name of 1..%d bytes of UTF-8", ErrInvalid, MaxModelName)
		}
	}
	if len(s.Preferences) > 0 {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(s.Preferences, &obj); err != nil || obj == nil {
			return fmt.Errorf("%w: preferences: a JSON object (OpenRouter's provider object)", ErrInvalid)
		}
		if _, err := prefs.Parse(s.Preferences, false); err != nil {
			return fmt.Errorf("%w: preferences: %w", ErrInvalid, err)
		}
	}
	return nil
}

// CheckPayer accepts an on-chain account (hex) or an off-chain local
// account name, as [[router.buyers]] does.
func CheckPayer(p string) (string, error) {
	if _, err := terms.ParseAccountID(p); err == nil {
		return strings.ToLower(p), nil
	}
	if !accountRE.MatchString(p) {
		return "", fmt.Errorf("%w: payer %q: an on-chain account (hex) or a local account matching %s", ErrInvalid, p, accountRE)
	}
	return p, nil
}

// Allows says whether the key may call model (no list: every model).
func (k *Key) Allows(model string) bool {
	if len(k.Models) == 0 {
		return true
	}
	for _, m := range k.Models {
		if m == model {
			return true
		}
	}
	return false
}

func (k *Key) check() error {
	if !idRE.MatchString(k.ID) {
		return fmt.Errorf("%w: key id %q", ErrCorrupt, k.ID)
	}
	if h, err := hex.DecodeString(k.TokenSHA256); err != nil || len(h) != 32 {
		return fmt.Errorf("%w: key %s: token hash", ErrCorrupt, k.ID)
	}
	if _, err := CheckPayer(k.Payer); err != nil {
		return fmt.Errorf("%w: key %s: %w", ErrCorrupt, k.ID, err)
	}
	if err := k.Settings.Validate(); err != nil {
		return fmt.Errorf("%w: key %s: %w", ErrCorrupt, k.ID, err)
	}
	return nil
}

func encodeKey(k *Key) ([]byte, error) {
	b, err := cborx.Marshal(k)
	if err != nil {
		return nil, fmt.Errorf("buyerkeys: encode key: %w", err)
	}
	return b, nil
}

// decodeKey reads a stored key record; anything but a valid key is
// ErrCorrupt.
func decodeKey(b []byte) (*Key, error) {
	return cborx.UnmarshalChecked(b, maxKeyRecord, ErrCorrupt, func(k *Key) error { return k.check() })
}
