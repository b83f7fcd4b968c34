package hwkey

import (
	"crypto/ecdsa"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-tpm-tools/simulator"
	"github.com/google/go-tpm/tpm2/transport"
	"github.com/google/go-tpm/tpm2/transport/linuxtpm"

	"github.com/tenzrod/tenzrod/receipts/internal/keyfile"
)

func mustOpen(t testing.TB, cfg Config) Key {
	t.Helper()
	k, err := Open(cfg)
	if err != nil {
		t.Fatalf("Open(%+v): %v", cfg, err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

func signAndVerify(t testing.TB, k Key, msg string) {
	t.Helper()
	d := sha256.Sum256([]byte(msg))
	sig, err := k.Sign(d[:])
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	if !ecdsa.VerifyASN1(k.Public(), d[:], sig) {
		t.Fatalf("%s signature does not verify", k.Backend())
	}
	other := sha256.Sum256([]byte(msg + "x"))
	if ecdsa.VerifyASN1(k.Public(), other[:], sig) {
		t.Fatalf("%s signature verifies over a different digest", k.Backend())
	}
}

func TestParseBackend(t *testing.T) {
	for in, want := range map[string]Backend{
		"tpm": BackendTPM, "tpm-sim": BackendTPMSim, "software": BackendSoftware,
		" TPM-SIM ": BackendTPMSim, "file": BackendSoftware,
	} {
		got, err := ParseBackend(in)
		if err != nil || got != want {
			t.Errorf("ParseBackend(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	_, err := ParseBackend("yubikey")
	if err == nil {
		t.Fatal("ParseBackend(yubikey) succeeded")
	}
	for _, v := range []string{`"tpm"`, `"tpm-sim"`, `"software"`, `"yubikey"`} {
		if !strings.Contains(err.Error(), v) {
			t.Errorf("error %q does not mention %s", err, v)
		}
	}
	if !BackendTPM.Hardware() || !BackendTPMSim.Hardware() || BackendSoftware.Hardware() {
		t.Error("Hardware() wrong")
	}
}

func TestConfigValidate(t *testing.T) {
	good := []Config{
		{Backend: BackendTPM},
		{Backend: BackendTPMSim, Dir: "/x"},
		{Backend: BackendSoftware, Dir: "/x"},
	}
	for _, c := range good {
		if err := c.Validate(); err != nil {
			t.Errorf("Validate(%+v): %v", c, err)
		}
	}
	bad := []Config{
		{},
		{Backend: "file", Dir: "/x"},
		{Backend: BackendTPMSim},
		{Backend: BackendSoftware},
	}
	for _, c := range bad {
		if err := c.Validate(); err == nil {
			t.Errorf("Validate(%+v) succeeded", c)
		}
		if _, err := Open(c); err == nil {
			t.Errorf("Open(%+v) succeeded", c)
		}
	}
}

func TestBackendsSignAndReopen(t *testing.T) {
	for _, b := range []Backend{BackendSoftware, BackendTPMSim} {
		t.Run(string(b), func(t *testing.T) {
			cfg := Config{Backend: b, Dir: filepath.Join(t.TempDir(), "identity")}
			k := mustOpen(t, cfg)
			if k.Backend() != b {
				t.Fatalf("Backend() = %q", k.Backend())
			}
			signAndVerify(t, k, "first")
			signAndVerify(t, k, "second")
			if err := k.Close(); err != nil {
				t.Fatal(err)
			}
			d := sha256.Sum256(nil)
			if _, err := k.Sign(d[:]); !errors.Is(err, ErrClosed) {
				t.Fatalf("Sign after Close: %v, want ErrClosed", err)
			}

			k2 := mustOpen(t, cfg)
			if !k2.Public().Equal(k.Public()) {
				t.Fatal("reopened key has a different public key")
			}
			signAndVerify(t, k2, "after reopen")

			other := mustOpen(t, Config{Backend: b, Dir: t.TempDir()})
			if other.Public().Equal(k.Public()) {
				t.Fatal("two directories gave the same key")
			}

			entries, err := os.ReadDir(cfg.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 {
				t.Fatalf("state dir holds %d entries, want 1", len(entries))
			}
			fi, err := os.Stat(filepath.Join(cfg.Dir, entries[0].Name()))
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Fatalf("key file mode %04o, want 0600", fi.Mode().Perm())
			}
			if di, _ := os.Stat(cfg.Dir); di.Mode().Perm() != 0o700 {
				t.Fatalf("state dir mode %04o, want 0700", di.Mode().Perm())
			}
		})
	}
}

func TestSignRejectsWrongDigestSize(t *testing.T) {
	for _, b := range []Backend{BackendSoftware, BackendTPMSim} {
		k := mustOpen(t, Config{Backend: b, Dir: t.TempDir()})
		for _, n := range []int{0, 20, 33, 64} {
			if _, err := k.Sign(make([]byte, n)); err == nil {
				t.Errorf("%s: Sign of %d-byte digest succeeded", b, n)
			}
		}
	}
}

// Several identities of both kinds open at once in one process, signing
// concurrently, as a multi-node test does.
func TestConcurrentKeysInOneProcess(t *testing.T) {
	const n = 5
	var keys []Key
	for i := 0; i < n; i++ {
		for _, b := range []Backend{BackendTPMSim, BackendSoftware} {
			keys = append(keys, mustOpen(t, Config{Backend: b, Dir: t.TempDir()}))
		}
	}
	seen := map[string]bool{}
	for _, k := range keys {
		b, err := k.Public().Bytes()
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if seen[s] {
			t.Fatal("two identities share a public key")
		}
		seen[s] = true
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(keys)*3)
	for i, k := range keys {
		for j := 0; j < 3; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d := sha256.Sum256([]byte(fmt.Sprintf("%d/%d", i, j)))
				sig, err := k.Sign(d[:])
				if err != nil {
					errs <- err
					return
				}
				if !ecdsa.VerifyASN1(k.Public(), d[:], sig) {
					errs <- fmt.Errorf("key %d (%s): signature does not verify", i, k.Backend())
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Racing first opens of one directory agree on one key.
func TestConcurrentFirstOpenSameDir(t *testing.T) {
	for _, b := range []Backend{BackendSoftware, BackendTPMSim} {
		dir := t.TempDir()
		pubs := make([]*ecdsa.PublicKey, 4)
		var wg sync.WaitGroup
		for i := range pubs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				k, err := Open(Config{Backend: b, Dir: dir})
				if err != nil {
					t.Error(err)
					return
				}
				pubs[i] = k.Public()
				k.Close()
			}()
		}
		wg.Wait()
		for _, p := range pubs[1:] {
			if p == nil || !p.Equal(pubs[0]) {
				t.Fatalf("%s: concurrent first opens disagree on the key", b)
			}
		}
	}
}

// The simulator is shared with other users in the process: a tpm-sim key
// keeps working when someone else has used (and reset) the simulator.
func TestSimKeySharesSimulator(t *testing.T) {
	k := mustOpen(t, Config{Backend: BackendTPMSim, Dir: t.TempDir()})
	sim, err := simulator.Get()
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Close(); err != nil {
		t.Fatal(err)
	}
	signAndVerify(t, k, "after another simulator user")
}

// The tpm backend's long-lived key (handle kept loaded, flushed on Close)
// run over a simulator transport.
func TestTPMKeyOverSimulator(t *testing.T) {
	sim, err := simulator.GetWithFixedSeedInsecure(42)
	if err != nil {
		t.Fatal(err)
	}
	tr := transport.FromReadWriteCloser(sim)
	k, err := newTPMKey(BackendTPM, tr, []byte("label-a"))
	if err != nil {
		sim.Close()
		t.Fatal(err)
	}
	signAndVerify(t, k, "tpm path")

	// The fixed template gives the same key again; another unique does not.
	again, err := createPrimary(tr, []byte("label-a"))
	if err != nil {
		t.Fatal(err)
	}
	if !again.pub.Equal(k.Public()) {
		t.Error("same template gave a different primary key")
	}
	if err := flush(tr, again.handle); err != nil {
		t.Fatal(err)
	}
	other, err := createPrimary(tr, []byte("label-b"))
	if err != nil {
		t.Fatal(err)
	}
	if other.pub.Equal(k.Public()) {
		t.Error("different unique gave the same primary key")
	}
	if err := flush(tr, other.handle); err != nil {
		t.Fatal(err)
	}

	handle := k.p.handle
	if err := k.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := k.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	d := sha256.Sum256(nil)
	if _, err := k.Sign(d[:]); !errors.Is(err, ErrClosed) {
		t.Fatalf("Sign after Close: %v", err)
	}
	if !sim.IsClosed() {
		t.Fatal("Close did not close the transport")
	}
	// Close flushed the handle: on a fresh transport it is unknown.
	sim2, err := simulator.GetWithFixedSeedInsecure(42)
	if err != nil {
		t.Fatal(err)
	}
	defer sim2.Close()
	if err := flush(transport.FromReadWriter(sim2), handle); err == nil {
		t.Error("handle still loaded after Close")
	}
}

func TestTPMMissingDevice(t *testing.T) {
	dev := filepath.Join(t.TempDir(), "tpmrm0")
	_, err := Open(Config{Backend: BackendTPM, Device: dev})
	if err == nil {
		t.Fatal("Open with missing device succeeded")
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error does not wrap fs.ErrNotExist: %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"hwkey: tpm device " + dev, `use backend "tpm-sim" or "software"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}

	if err := os.WriteFile(dev, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Open(Config{Backend: BackendTPM, Device: dev})
	if !errors.Is(err, linuxtpm.ErrFileIsNotDevice) {
		t.Errorf("regular file as device: %v", err)
	}
}

func TestDefaultDevice(t *testing.T) {
	if _, err := os.Stat(DefaultDevice); err == nil {
		t.Skip("this machine has a TPM")
	}
	_, err := Open(Config{Backend: BackendTPM})
	if err == nil || !strings.Contains(err.Error(), "hwkey: tpm device /dev/tpmrm0: ") {
		t.Fatalf("Open(tpm) without a device: %v", err)
	}
}

func TestRejectsBadKeyFiles(t *testing.T) {
	for _, tc := range []struct {
		b    Backend
		file string
	}{{BackendSoftware, SoftwareKeyFile}, {BackendTPMSim, SimSeedFile}} {
		dir := t.TempDir()
		k := mustOpen(t, Config{Backend: tc.b, Dir: dir})
		k.Close()
		path := filepath.Join(dir, tc.file)
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(Config{Backend: tc.b, Dir: dir}); !errors.Is(err, keyfile.ErrPermissions) {
			t.Errorf("%s: world-readable key file: %v", tc.b, err)
		}
		if err := os.WriteFile(path, []byte("garbage"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(Config{Backend: tc.b, Dir: dir}); err == nil {
			t.Errorf("%s: garbage key file accepted", tc.b)
		}
	}
}

func benchmarkSign(b *testing.B, backend Backend) {
	k := mustOpen(b, Config{Backend: backend, Dir: b.TempDir()})
	d := sha256.Sum256([]byte("bench"))
	b.ResetTimer()
	for b.Loop() {
		if _, err := k.Sign(d[:]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSignSoftware(b *testing.B) { benchmarkSign(b, BackendSoftware) }
func BenchmarkSignTPMSim(b *testing.B)   { benchmarkSign(b, BackendTPMSim) }
