package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/store/storetest"
)

func TestMain(m *testing.M) {
	storetest.WorkerMain(func(path string) (store.Store, error) {
		return store.OpenSQLite(context.Background(), path)
	})
	os.Exit(m.Run())
}

func TestSQLiteConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) (store.Store, string) {
		path := filepath.Join(t.TempDir(), "wo.db")
		s, err := store.OpenSQLite(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s, path
	})
}

func TestSQLiteCreatedOnFirstUseAtDefaultPath(t *testing.T) {
	state := t.TempDir()
	env := map[string]string{"XDG_STATE_HOME": state, "HOME": "/home/someone", "USERPROFILE": "/home/someone"}
	getenv := func(name string) string { return env[name] }
	path, err := store.DefaultPath(getenv)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(state, "wo", "wo.db"); path != want {
		t.Fatalf("default path %s, want %s", path, want)
	}
	s, err := store.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file not created: %v", err)
	}
	var mode string
	if err := store.DBOf(s).QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q (%v), want wal", mode, err)
	}

	delete(env, "XDG_STATE_HOME")
	path, _ = store.DefaultPath(getenv)
	if want := filepath.Join("/home/someone", ".local", "state", "wo", "wo.db"); path != want {
		t.Errorf("fallback default path %s, want %s", path, want)
	}

	clear(env)
	if path, err := store.DefaultPath(getenv); err == nil || !strings.Contains(err.Error(), "set WO_STORE or XDG_STATE_HOME") {
		t.Errorf("with neither XDG_STATE_HOME nor a home: path %q, error %v; want an error saying what to set", path, err)
	}
}
