package keyfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

func TestLoadOrCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "k.pem")
	gen := func() ([]byte, error) { return []byte("secret-1"), nil }
	b, created, err := LoadOrCreate(path, "T", gen)
	if err != nil || !created || string(b) != "secret-1" {
		t.Fatalf("create: %q %v %v", b, created, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", fi.Mode(), err)
	}
	b, created, err = LoadOrCreate(path, "T", func() ([]byte, error) { return []byte("other"), nil })
	if err != nil || created || string(b) != "secret-1" {
		t.Fatalf("reload: %q %v %v", b, created, err)
	}
	if _, err := Load(path, "U"); err == nil {
		t.Fatal("wrong block type accepted")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %d entries", len(entries))
	}
}

func TestLoadRejects(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	block := []byte("-----BEGIN T-----\nAAAA\n-----END T-----\n")
	if _, err := Load(write("ok", block, 0o600), "T"); err != nil {
		t.Fatalf("valid file: %v", err)
	}
	if _, err := Load(write("open", block, 0o640), "T"); !errors.Is(err, ErrPermissions) {
		t.Errorf("group-readable: %v", err)
	}
	if _, err := Load(write("trail", append(bytes.Clone(block), "junk"...), 0o600), "T"); err == nil {
		t.Error("trailing data accepted")
	}
	if _, err := Load(write("nopem", []byte("junk"), 0o600), "T"); err == nil {
		t.Error("non-PEM accepted")
	}
	if _, err := Load(write("big", make([]byte, MaxSize+1), 0o600), "T"); err == nil {
		t.Error("oversized file accepted")
	}
	if _, err := Load(dir, "T"); err == nil {
		t.Error("directory accepted")
	}
	genErr := errors.New("no entropy")
	if _, _, err := LoadOrCreate(filepath.Join(dir, "new"), "T", func() ([]byte, error) { return nil, genErr }); !errors.Is(err, genErr) {
		t.Errorf("generator error: %v", err)
	}
}

func TestConcurrentCreateAgrees(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.pem")
	const n = 8
	got := make([][]byte, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, _, err := LoadOrCreate(path, "T", func() ([]byte, error) { return []byte(strconv.Itoa(i)), nil })
			if err != nil {
				t.Error(err)
			}
			got[i] = b
		}()
	}
	wg.Wait()
	for i := range got {
		if !bytes.Equal(got[i], got[0]) {
			t.Fatalf("creator %d got %q, creator 0 got %q", i, got[i], got[0])
		}
	}
}
