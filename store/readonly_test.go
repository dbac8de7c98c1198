package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadOnlyOpenNeverCreatesAStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not", "yet")
	path := filepath.Join(dir, "wo.db")
	_, err := OpenSQLiteReadOnly(context.Background(), path)
	var missing *MissingError
	if !errors.As(err, &missing) || !strings.Contains(err.Error(), "no store at "+path+": run wo import or wo create first") {
		t.Fatalf("error = %v, want a MissingError naming the path", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the read-only open created %s", dir)
	}
}

func TestReadOnlyOpenLeavesAForeignDatabaseAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('mine')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, _ := os.ReadFile(path)

	_, err = OpenSQLiteReadOnly(context.Background(), path)
	var foreign *ForeignError
	if !errors.As(err, &foreign) || !strings.Contains(err.Error(), "is not a wo store") {
		t.Fatalf("error = %v, want a ForeignError", err)
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Error("the foreign database file changed")
	}
	for _, side := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + side); err == nil {
			t.Errorf("%s%s was created: the file was switched to WAL", path, side)
		}
	}
	db, _ = sql.Open("sqlite", path)
	defer db.Close()
	var mode string
	db.QueryRow(`PRAGMA journal_mode`).Scan(&mode)
	var tables int
	db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table'`).Scan(&tables)
	if mode != "delete" || tables != 1 {
		t.Errorf("journal mode %s and %d tables after the read-only open, want delete and 1", mode, tables)
	}
}

func TestReadOnlyOpenRejectsAFileThatIsNotSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(path, []byte(strings.Repeat("just some text\n", 200)), 0o600)
	_, err := OpenSQLiteReadOnly(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), "is not a wo store: it is not a SQLite database") {
		t.Fatalf("error = %v", err)
	}
}

func TestReadOnlyOpenReadsAndCannotWrite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wo.db")
	s, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, map[string]any{"_key": "task_a", "title": "A"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	r, err := OpenSQLiteReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if doc, err := r.Get(ctx, "task_a"); err != nil || doc["title"] != "A" {
		t.Fatalf("Get = %v, %v", doc, err)
	}
	err = r.Create(ctx, map[string]any{"_key": "task_b"})
	var perm *PermissionError
	if !errors.As(err, &perm) || IsUnavailable(err) {
		t.Errorf("a write through the read-only store gave %v, want a PermissionError that is not Unavailable", err)
	}
}

// TestReadOnlyStoreFolder needs a user that file modes apply to.
func TestReadOnlyStoreFolder(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root, which ignores file modes: run the test binary as another user to check a read-only store folder")
	}
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "wo.db")
	s, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s.Create(ctx, map[string]any{"_key": "task_a", "title": "A"})
	s.Close()
	os.Chmod(path, 0o444)
	os.Chmod(dir, 0o555)
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	r, err := OpenSQLiteReadOnly(ctx, path)
	if err != nil {
		t.Fatalf("read-only open of a read-only store: %v", err)
	}
	docs, err := r.List(ctx, Filter{})
	r.Close()
	if err != nil || len(docs) != 1 {
		t.Fatalf("List = %d docs, %v", len(docs), err)
	}
	w, err := OpenSQLite(ctx, path)
	if err == nil {
		err = w.Create(ctx, map[string]any{"_key": "task_b"})
		w.Close()
	}
	var perm *PermissionError
	if !errors.As(err, &perm) || IsUnavailable(err) {
		t.Errorf("writing a read-only store gave %v, want a PermissionError", err)
	}
}

func TestWritingOpenRefusesAForeignDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	db, _ := sql.Open("sqlite", path)
	if _, err := db.Exec(`CREATE TABLE notes (body TEXT)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, _ := os.ReadFile(path)
	_, err := OpenSQLite(context.Background(), path)
	var foreign *ForeignError
	if !errors.As(err, &foreign) {
		t.Fatalf("error = %v, want a ForeignError", err)
	}
	after, _ := os.ReadFile(path)
	if _, werr := os.Stat(path + "-wal"); werr == nil || string(before) != string(after) {
		t.Error("the foreign file was changed")
	}
	// An empty file is a new store.
	empty := filepath.Join(t.TempDir(), "new.db")
	os.WriteFile(empty, nil, 0o600)
	s, err := OpenSQLite(context.Background(), empty)
	if err != nil {
		t.Fatalf("empty file: %v", err)
	}
	s.Close()
}

func TestAFolderOrADeviceIsNotAStore(t *testing.T) {
	for _, path := range []string{t.TempDir(), "/dev/null"} {
		_, err := OpenSQLite(context.Background(), path)
		var foreign *ForeignError
		if !errors.As(err, &foreign) || IsUnavailable(err) {
			t.Errorf("%s: %v, want a clear 'not a wo store' (never 'rerun later')", path, err)
		}
	}
}
