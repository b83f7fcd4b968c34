package openai

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"

	"github.com/tenzrod/tenzrod/gossip"
)

// Continuity is `tenzro.session.continuity`: JSON true, false or the
// string "required".
type Continuity string

const (
	ContinuityOff      Continuity = ""
	ContinuityOn       Continuity = "true"
	ContinuityRequired Continuity = "required"
)

// errContinuity marks a bad continuity value, so the 400 can name it.
var errContinuity = errors.New(`continuity must be true, false or "required"`)

// UnmarshalJSON accepts true, false, null and "required" only.
func (c *Continuity) UnmarshalJSON(b []byte) error {
	switch string(bytes.TrimSpace(b)) {
	case "true":
		*c = ContinuityOn
	case "false", "null":
		*c = ContinuityOff
	case `"required"`:
		*c = ContinuityRequired
	default:
		return fmt.Errorf(`%w, not %s`, errContinuity, clip(b))
	}
	return nil
}

// MarshalJSON writes the form UnmarshalJSON reads.
func (c Continuity) MarshalJSON() ([]byte, error) {
	switch c {
	case ContinuityOn:
		return []byte("true"), nil
	case ContinuityRequired:
		return []byte(`"required"`), nil
	default:
		return []byte("false"), nil
	}
}

// SessionOptions is `tenzro.session`: the request is one turn of a
// session pinned to its primary, with a standby successor when continuity
// is asked for. Continuity and jurisdiction are the first turn's; later
// turns need only the ID (X-Tenzro-Session carries nothing else).
type SessionOptions struct {
	ID           string     `json:"id,omitempty"` // optional on the first turn
	Continuity   Continuity `json:"continuity,omitempty"`
	Jurisdiction string     `json:"jurisdiction,omitempty"` // a country code or continent
}

// sessionIDMax is the longest session ID; IDs are URL-safe.
const sessionIDMax = 64

// checkSessionID accepts 1..64 of A-Z a-z 0-9 - _.
func checkSessionID(id string) error {
	if id == "" || len(id) > sessionIDMax {
		return fmt.Errorf("must be 1..%d characters, got %d", sessionIDMax, len(id))
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-' && c != '_' {
			return fmt.Errorf("may hold only A-Z, a-z, 0-9, '-' and '_' (byte %d is %q)", i, c)
		}
	}
	return nil
}

// parseSession merges X-Tenzro-Session into the body's session options
// and checks them.
func parseSession(o *Options, h http.Header) *Error {
	hid := h.Get("X-Tenzro-Session")
	if hid != "" {
		if err := checkSessionID(hid); err != nil {
			return BadRequest("X-Tenzro-Session", "X-Tenzro-Session: session id %v", err)
		}
		switch {
		case o.Session == nil:
			o.Session = &SessionOptions{ID: hid}
		case o.Session.ID == "":
			o.Session.ID = hid
		case o.Session.ID != hid:
			return BadRequest("X-Tenzro-Session", "X-Tenzro-Session %q and tenzro.session.id %q name different sessions", hid, o.Session.ID)
		}
	}
	s := o.Session
	if s == nil {
		return nil
	}
	if s.ID != "" {
		if err := checkSessionID(s.ID); err != nil {
			return BadRequest("tenzro.session.id", "session id %v", err)
		}
	}
	if s.Jurisdiction != "" {
		if err := gossip.CheckRegion(s.Jurisdiction); err != nil {
			return BadRequest("tenzro.session.jurisdiction", "jurisdiction: %v", err)
		}
	}
	return nil
}

// clip shortens raw JSON for an error message.
func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}
