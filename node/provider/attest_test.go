package provider

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/filecoin-project/go-clock"

	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/attest/attesttest"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// countingQuotes counts the reports asked of go-sev-guest's fake device.
type countingQuotes struct {
	*attesttest.QuoteProvider
	n atomic.Int32
}

func (c *countingQuotes) GetRawQuote(rd [64]byte) ([]uint8, error) {
	c.n.Add(1)
	return c.QuoteProvider.GetRawQuote(rd)
}

// keeper is a session keeper on a mock clock set inside the test chain's
// validity; its sessions last an hour and rotate after 45 minutes.
func keeper(t *testing.T) (*identity.SessionKeeper, *clock.Mock) {
	t.Helper()
	id, key, _ := testMachine(t)
	clk := clock.NewMock()
	clk.Set(attesttest.Now)
	return identity.NewSessionKeeper(id, key, time.Hour, clk, slog.Default()), clk
}

func current(t *testing.T, k *identity.SessionKeeper) *identity.Session {
	t.Helper()
	s, err := k.Current()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDeviceAttestationFollowsTheSessionKey: the device is asked once per
// session key; after the key rotates the provider re-announces with a
// report binding the new key, and a tee call is served only while the
// attested key is the one it signs with.
func TestDeviceAttestationFollowsTheSessionKey(t *testing.T) {
	k, clk := keeper(t)
	qp := &countingQuotes{QuoteProvider: attesttest.NewQuoteProvider(t, attesttest.ReportOpts{TCB: attesttest.GoodTCB})}
	first := current(t, k)
	qp.Bind(first.Cert.SessionPub)
	a := newAttestor(&deviceSource{qp: qp}, attesttest.Policy(t), clk, slog.Default())
	if err := a.start(first); err != nil {
		t.Fatalf("start: %v", err)
	}
	for range 3 {
		if att := a.forAnnouncement(first); att == nil {
			t.Fatal("no attestation announced")
		}
	}
	if n := qp.n.Load(); n != 1 {
		t.Fatalf("device asked %d times for one session key, want 1", n)
	}
	if !a.binds(k) || a.rotated(k) {
		t.Fatal("fresh session: want bound and not rotated")
	}
	if res := a.attested(); res == nil || !bytes.Equal(res.SessionPub, first.Cert.SessionPub) {
		t.Fatalf("attested %+v: want the first session's key", res)
	}

	clk.Add(50 * time.Minute) // past 3/4 of the session's life: the next Current rotates
	if !a.rotated(k) {
		t.Fatal("session rotated, but no re-announcement is due")
	}
	if a.binds(k) {
		t.Fatal("tee still served after the key rotated away from the attested one")
	}
	second := current(t, k)
	qp.Bind(second.Cert.SessionPub)
	att := a.forAnnouncement(second)
	if att == nil {
		t.Fatal("no attestation for the rotated key")
	}
	s := attest.Session{Pub: second.Cert.SessionPub, NotAfter: second.NotAfter()}
	if _, err := attest.Verify(att, s, attesttest.Policy(t), clk.Now()); err != nil {
		t.Fatalf("re-announced attestation does not bind the new key: %v", err)
	}
	if qp.n.Load() != 2 || !a.binds(k) || a.rotated(k) {
		t.Fatalf("after rotation: %d reports, binds=%v, rotated=%v", qp.n.Load(), a.binds(k), a.rotated(k))
	}
}

// TestDeviceAttestationRefusedByOwnPolicy: a report the node's own policy
// refuses (TCB below its minimum) is never announced, and a device source
// fails the start with the reason.
func TestDeviceAttestationRefusedByOwnPolicy(t *testing.T) {
	k, clk := keeper(t)
	low := attesttest.GoodTCB
	low.SnpSpl--
	qp := attesttest.NewQuoteProvider(t, attesttest.ReportOpts{TCB: low})
	sess := current(t, k)
	qp.Bind(sess.Cert.SessionPub)
	a := newAttestor(&deviceSource{qp: qp}, attesttest.Policy(t), clk, slog.Default())
	if err := a.start(sess); !errors.Is(err, attest.ErrLowTCB) {
		t.Fatalf("start with a low-TCB report: %v, want attest.ErrLowTCB", err)
	}
	if a.forAnnouncement(sess) != nil || a.binds(k) || a.attested() != nil {
		t.Fatal("a report the node's policy refuses was announced")
	}
}

// TestFileAttestation: the file source writes the REPORT_DATA the session
// key needs beside the file, reads a raw quote or an encoded attestation,
// and never announces one that binds another key.
func TestFileAttestation(t *testing.T) {
	k, clk := keeper(t)
	sess := current(t, k)
	path := filepath.Join(t.TempDir(), "attestation.bin")
	a := newAttestor(&fileSource{path: path}, attesttest.Policy(t), clk, slog.Default())
	if err := a.start(sess); err != nil {
		t.Fatalf("a missing file fails the start: %v", err)
	}
	rd := attest.ReportData(sess.Cert.SessionPub)
	got, err := os.ReadFile(path + ReportDataSuffix)
	if err != nil || strings.TrimSpace(string(got)) != fmt.Sprintf("%x", rd[:]) {
		t.Fatalf("report data file %q (%v), want %x", got, err, rd)
	}
	qp := attesttest.NewQuoteProvider(t, attesttest.ReportOpts{TCB: attesttest.GoodTCB})
	qp.Bind(sess.Cert.SessionPub)
	raw, err := qp.GetRawQuote(rd)
	if err != nil {
		t.Fatal(err)
	}
	// announces writes the file and reports whether the attestor announces
	// what it holds.
	announces := func(file []byte) bool {
		t.Helper()
		if err := os.WriteFile(path, file, 0o600); err != nil {
			t.Fatal(err)
		}
		return a.forAnnouncement(sess) != nil
	}
	if !announces(raw) {
		t.Fatal("raw quote in the file not announced")
	}
	enc, err := attesttest.Attestation(t, sess.Cert.SessionPub).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !announces(enc) {
		t.Fatal("encoded attestation in the file not announced")
	}
	stale, _ := attesttest.Attestation(t, attesttest.SessionPub(t)).Marshal()
	if announces(stale) || a.binds(k) {
		t.Fatal("a file binding another key was announced")
	}
}

// TestAttestationConfig: each bad [provider.attestation] key is named, a
// model offering tee needs a source, and a missing device is a clear error.
func TestAttestationConfig(t *testing.T) {
	for key, mutate := range map[string]func(*Config){
		"provider.attestation.source":     func(c *Config) { c.Attestation.Source = "tpm" },
		"provider.attestation.file":       func(c *Config) { c.Attestation.Source = AttestFile },
		"provider.attestation.device":     func(c *Config) { c.Attestation = AttestationConfig{Source: AttestSEVSNP} },
		"provider.models[0].verification": func(c *Config) { c.Models[0].Verification = []terms.Verification{terms.VerifyTEE} },
	} {
		c := validConfig()
		mutate(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: error %v does not name the key", key, err)
		}
	}
	c := validConfig()
	c.Attestation = AttestationConfig{Source: AttestSEVSNP, Device: filepath.Join(t.TempDir(), "sev-guest")}
	c.Models[0].Verification = []terms.Verification{terms.VerifyTEE}
	if err := c.Validate(); err != nil {
		t.Fatalf("sev-snp config: %v", err)
	}
	_, err := newSource(c.Attestation, func(p string) string { return p }, nil)
	if !errors.Is(err, errNoDevice) || !strings.Contains(err.Error(), "provider.attestation.device") || !strings.Contains(err.Error(), "sev-guest") {
		t.Fatalf("missing device: %v, want a clear error naming the key and the path", err)
	}
	c.Attestation.EKCert = "/nonexistent/vcek.der"
	if _, err := newSource(c.Attestation, func(p string) string { return p }, nil); err == nil || !strings.Contains(err.Error(), "provider.attestation.ek_cert") {
		t.Fatalf("missing ek_cert: %v", err)
	}
}
