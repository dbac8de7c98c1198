package commands

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/store"
)

// hostile is what a document, a reviewer or a server might put in a title:
// an OSC 52 clipboard write, a screen clear, a CSI colour, a bare CR that
// overwrites the line, an 8-bit CSI and a right-to-left override.
const hostile = "Fix\x1b]52;c;cm0gLXJmIH4=\x07 it\x1b[H\x1b[2J\x1b[31m\rOK \u009b1m \u202eevil"

// controls reports the first terminal control left in s, other than the
// newlines and tabs of wo's own layout.
func controls(s string) string {
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0x202e {
			return fmt.Sprintf("%U", r)
		}
	}
	return ""
}

// hostileStore imports task_cr_01 with hostile text in its title,
// description, notes, last error and block reason, and an activity entry
// with a hostile review comment.
func hostileStore(t *testing.T) string {
	t.Helper()
	db := newDB(t)
	doc := standalone(t)
	doc["title"] = hostile
	doc["description"] = "first line\nsecond " + hostile
	mustRun(t, db, string(mustJSON(t, []any{doc})), "import", "-")
	s, err := store.OpenSQLite(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	cur, err := s.Get(ctx, "task_cr_01")
	if err != nil {
		t.Fatal(err)
	}
	patch := map[string]any{"status": "blocked", "block_reason": "waiting " + hostile,
		"work_order": map[string]any{"state": map[string]any{"notes": []any{"note " + hostile},
			"last_error": map[string]any{"step": 1, "action": "create_worktree", "attempt": 1, "message": "boom " + hostile}}}}
	if _, err := s.Update(ctx, "task_cr_01", cur["_rev"].(string), patch); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendLog(ctx, store.LogEntry{Action: "review_checked\x1b[2J", TaskKey: "task_cr_01", SessionKey: "ci\r",
		Details: map[string]any{"comment": "please " + hostile}}); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestUntrustedTextIsEscapedOnTerminals(t *testing.T) {
	t.Parallel()
	db := hostileStore(t)
	for _, args := range [][]string{
		{"list"},
		{"show", "task_cr_01"},
		{"status", "task_cr_01"},
		{"status", "task_cr_01", "--format", "markdown"},
		{"status", "task_cr_01", "--format", "mermaid"},
		{"status", "task_cr_01", "--format", "dot"},
		{"log", "task_cr_01"},
		{"run", "task_cr_01", "--dry-run"},
		{"validate", "task_cr_01"},
	} {
		r := runWo(t, db, "", args...)
		if c := controls(r.stdout + r.stderr); c != "" {
			t.Errorf("wo %s printed the control %s:\n%q\n%q", strings.Join(args, " "), c, r.stdout, r.stderr)
		}
	}
	// The text is shown, escaped, not dropped.
	r := mustRun(t, db, "", "show", "task_cr_01")
	for _, want := range []string{`Fix\x1b]52;c;cm0gLXJmIH4=\x07 it\x1b[H\x1b[2J`, `\rOK \u009b1m \u202eevil`,
		"first line\nsecond Fix", `note Fix\x1b]52`, `boom Fix\x1b]52`, `blocked: waiting Fix\x1b]52`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, r.stdout)
		}
	}
	r = mustRun(t, db, "", "log", "task_cr_01", "--wide")
	if !strings.Contains(r.stdout, `comment=please Fix\x1b]52;c;`) {
		t.Errorf("log:\n%s", r.stdout)
	}
}

func TestJSONOutputKeepsUntrustedTextExact(t *testing.T) {
	t.Parallel()
	db := hostileStore(t)
	r := mustRun(t, db, "", "list", "--json")
	var env struct{ Data []TaskRow }
	if err := json.Unmarshal([]byte(r.stdout), &env); err != nil || len(env.Data) != 1 {
		t.Fatalf("list --json: %v %s", err, r.stdout)
	}
	if env.Data[0].Title != hostile {
		t.Errorf("--json title %q, want exactly %q", env.Data[0].Title, hostile)
	}
	r = mustRun(t, db, "", "export")
	if !strings.Contains(r.stdout, `\u001b]52;c;cm0gLXJmIH4=\u0007`) {
		t.Errorf("export changed the title: %s", r.stdout)
	}
}

func TestErrorMessagesAreEscaped(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	mustRun(t, db, "", "init")
	r := runWo(t, db, "", "show", "task_\x1b]52;c;eA==\x07")
	if r.code != ExitFailed || controls(r.stderr) != "" || !strings.Contains(r.stderr, `task_\x1b]52;c;eA==\x07`) {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// graphDoc is a child of an epic whose title tries to break out of each
// graph format.
func graphStore(t *testing.T, title string) string {
	t.Helper()
	db := newDB(t)
	epic := fixtureDoc(t, "task_cr_epic")
	child := fixtureDoc(t, "task_cr_01")
	child["work_order"].(map[string]any)["dependencies"] = map[string]any{"blocked_by": []any{}, "blocks": []any{}}
	child["title"] = title
	mustRun(t, db, string(mustJSON(t, []any{epic, child})), "import", "-")
	return db
}

func TestMermaidTitleCannotAddAClickLine(t *testing.T) {
	t.Parallel()
	db := graphStore(t, "PR 1\"]\n  click task_cr_01 \"javascript:alert(1)\"\n  x[\"<img src=x onerror=alert(1)>")
	r := mustRun(t, db, "", "status", "task_cr_epic", "--format", "mermaid")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "click") || strings.HasPrefix(l, "x[") || strings.Contains(l, "<img") {
			t.Errorf("injected mermaid line %q in:\n%s", l, r.stdout)
		}
	}
	// graph TD, one node, five classDefs.
	if len(lines) != 7 || !strings.HasPrefix(strings.TrimSpace(lines[1]), `task_cr_01["PR 1#quot;#93;   click task_cr_01 #quot;javascript`) {
		t.Errorf("mermaid:\n%s", r.stdout)
	}
}

func TestMarkdownTitleStaysInItsCell(t *testing.T) {
	t.Parallel()
	db := graphStore(t, "a | b\n| injected | row |\n<script>x</script> [link](javascript:alert(1))")
	r := mustRun(t, db, "", "status", "task_cr_epic", "--format", "markdown")
	var rows []string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, "|") {
			rows = append(rows, l)
		}
	}
	if len(rows) != 4 { // header, rule, epic, child
		t.Fatalf("%d table lines, want 4:\n%s", len(rows), r.stdout)
	}
	child := rows[3]
	if cells := strings.Count(child, "|") - strings.Count(child, `\|`); cells != 8 {
		t.Errorf("child row has %d unescaped pipes, want 8: %s", cells, child)
	}
	if strings.Contains(child, "<script>") || strings.Contains(child, "[link](") {
		t.Errorf("markup survived: %s", child)
	}
}

func TestDotLabelsAreEscaped(t *testing.T) {
	t.Parallel()
	db := graphStore(t, `x", URL="javascript:alert(1)", label="pwned`+"\\l\n")
	r := mustRun(t, db, "", "status", "task_cr_epic", "--format", "dot")
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.Contains(l, "task_cr_01") && strings.Contains(l, "label=") {
			want := `  "task_cr_01" [label="task_cr_01\nx\", URL=\"javascript:alert(1)\", label=\"pwned\\l \nopen", fillcolor=white];`
			if l != want {
				t.Errorf("dot node\n got %s\nwant %s", l, want)
			}
			return
		}
	}
	t.Errorf("no node line:\n%s", r.stdout)
}

func TestImportStopsReadingAtTheSizeLimit(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	started := time.Now()
	r := runWo(t, db, "", "import", "/dev/zero")
	if r.code != ExitInvalid || !strings.Contains(r.stderr, "/dev/zero is larger than 32 MiB, the most wo reads at once") ||
		!strings.Contains(r.stderr, "--max-size") {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
	if d := time.Since(started); d > 10*time.Second {
		t.Errorf("wo import /dev/zero took %s", d)
	}
	big := filepath.Join(t.TempDir(), "big.json")
	data, _ := os.ReadFile(fixture)
	os.WriteFile(big, data, 0o600)
	r = runWo(t, db, "", "import", big, "--max-size", "1K")
	if r.code != ExitInvalid || !strings.Contains(r.stderr, "is larger than 1 KiB") {
		t.Errorf("--max-size 1K: exit %d: %s", r.code, r.stderr)
	}
	r = runWo(t, db, string(data), "import", "-", "--max-size", "2K")
	if r.code != ExitInvalid || !strings.Contains(r.stderr, "stdin is larger than 2 KiB") {
		t.Errorf("stdin: exit %d: %s", r.code, r.stderr)
	}
	if r := runWo(t, db, "", "import", big, "--max-size", "lots"); r.code != ExitInvalid || !strings.Contains(r.stderr, `--max-size: "lots" is not a size`) {
		t.Errorf("bad size: exit %d: %s", r.code, r.stderr)
	}
	mustRun(t, db, "", "import", big, "--max-size", "64MiB")
}

func TestImportRefusesAmbiguousOrHostileJSON(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, input, want string }{
		{"duplicate key", `[{"_key": "task_a", "status": "open", "status": "closed"}]`, `duplicate key "status" in [0]`},
		{"invalid UTF-8", "[{\"_key\": \"task_a\", \"title\": \"\xff\"}]", "invalid UTF-8 at byte offset 30"},
		{"deep nesting", `[{"_key": "task_a", "x": ` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "}]", "nested deeper than 64 levels"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := newDB(t)
			r := runWo(t, db, tc.input, "import", "-")
			if r.code != ExitInvalid || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d: %.500s", r.code, r.stderr)
			}
			if r := runWo(t, db, tc.input, "import", "-", "--format", "tasks-json"); r.code != ExitInvalid || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("tasks-json: exit %d: %.500s", r.code, r.stderr)
			}
		})
	}
}

func TestHugeRejectedKeyIsNotEchoed(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	doc := `[{"_key": "` + strings.Repeat("k", 10<<20) + `", "title": "t"}]`
	for _, asJSON := range []bool{false, true} {
		args := []string{"import", "-"}
		if asJSON {
			args = append(args, "--json")
		}
		r := runWo(t, db, doc, args...)
		if r.code != ExitInvalid || len(r.stdout)+len(r.stderr) > 2000 || !strings.Contains(r.stdout+r.stderr, "10485760 bytes") {
			t.Errorf("--json=%v: exit %d, %d bytes of output: %.300s %.300s", asJSON, r.code, len(r.stdout)+len(r.stderr), r.stdout, r.stderr)
		}
	}
}

func TestReadOnlyCommandsNeverCreateAStore(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "nowhere")
	db := filepath.Join(dir, "wo.db")
	for _, args := range [][]string{{"list"}, {"show", "task_a"}, {"status", "task_a"}, {"export"},
		{"validate", "task_a"}, {"log", "task_a"}} {
		r := runWo(t, db, "", args...)
		if r.code != ExitFailed || !strings.Contains(r.stderr, "no store at "+db+": run wo import or wo create first") {
			t.Errorf("wo %s: exit %d: %s", args[0], r.code, r.stderr)
		}
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("wo %s created %s", args[0], dir)
		}
	}
}

func TestReadOnlyCommandsLeaveAForeignSQLiteFileAlone(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "app.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	db.Exec(`CREATE TABLE users (name TEXT); INSERT INTO users VALUES ('ann')`)
	db.Close()
	before, _ := os.ReadFile(path)
	for _, args := range [][]string{{"list"}, {"show", "task_a"}, {"status", "task_a"}, {"export"}, {"log", "task_a"},
		{"import", fixture}, {"reset", "task_a", "--to-start"}} {
		r := runWo(t, path, "", args...)
		if r.code != ExitInvalid || !strings.Contains(r.stderr, path+" is not a wo store: it is a SQLite database without wo's tables") {
			t.Errorf("wo %s: exit %d: %s", args[0], r.code, r.stderr)
		}
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Error("the foreign file changed")
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Error("the foreign file was switched to WAL")
	}
	text := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(text, []byte(strings.Repeat("not a database\n", 100)), 0o600)
	if r := runWo(t, text, "", "list"); r.code != ExitInvalid || !strings.Contains(r.stderr, "is not a wo store: it is not a SQLite database") {
		t.Errorf("text file: exit %d: %s", r.code, r.stderr)
	}
}

// unwritableDir is a folder in which this process may not create files:
// a read-only folder, or for root (whom modes do not stop) a place in
// /sys, where mkdir fails with EPERM.
func unwritableDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		dir := t.TempDir()
		os.Chmod(dir, 0o555)
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		return filepath.Join(dir, "sub")
	}
	dir := "/sys/wo-test-no-such-dir"
	if err := os.Mkdir(dir, 0o700); !errors.Is(err, fs.ErrPermission) {
		if err == nil {
			os.Remove(dir)
		}
		t.Skipf("no folder here refuses root's mkdir with a permission error (got %v)", err)
	}
	return dir
}

func TestPermissionErrorsSayWhatAndExit1(t *testing.T) {
	t.Parallel()
	db := filepath.Join(unwritableDir(t), "wo.db")
	data, _ := os.ReadFile(fixture)
	r := runWo(t, db, string(data), "import", "-")
	if r.code != ExitFailed || !strings.Contains(r.stderr, "creating the store's folder "+db+": permission denied") {
		t.Errorf("exit %d (want 1, not 5 'rerun later'): %s", r.code, r.stderr)
	}
	r = runWo(t, db, string(data), "import", "-", "--json")
	var env Envelope
	if json.Unmarshal([]byte(r.stdout), &env); env.Error == nil || env.Error.Code != "PERMISSION_DENIED" {
		t.Errorf("envelope: %s", r.stdout)
	}
}

// TestReadOnlyStoreFile needs a user that file modes apply to; as root it
// skips (run the test binary as another user to check it).
func TestReadOnlyStoreFile(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("running as root, which file modes do not stop")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "wo.db")
	mustRun(t, db, "", "import", fixture)
	os.Chmod(db, 0o444)
	os.Chmod(dir, 0o555)
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	r := mustRun(t, db, "", "list")
	if !strings.Contains(r.stdout, "task_cr_01") {
		t.Errorf("list on a read-only store: %s", r.stdout)
	}
	mustRun(t, db, "", "show", "task_cr_01")
	r = runWo(t, db, "", "reset", "task_cr_01", "--to-start")
	if r.code != ExitFailed || !strings.Contains(r.stderr, "permission denied") {
		t.Errorf("a write to a read-only store: exit %d: %s", r.code, r.stderr)
	}
}

func TestFromStepOutOfRangeIsAUsageError(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	mustRun(t, db, "", "import", fixture)
	for _, args := range [][]string{
		{"run", "task_cr_01", "--from-step", "99"},
		{"run", "task_cr_01", "--from-step", "99", "--dry-run"},
		{"run", "task_cr_01", "--until-step", "12"},
	} {
		r := runWo(t, db, "", args...)
		if r.code != ExitInvalid || !strings.Contains(r.stderr, "task task_cr_01 has steps 1..11") {
			t.Errorf("wo %s: exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	r := runWo(t, db, "", "run", "task_cr_01", "--from-step", "5", "--until-step", "3")
	if r.code != ExitInvalid || !strings.Contains(r.stderr, "--from-step 5 is after --until-step 3") {
		t.Errorf("from after until: exit %d: %s", r.code, r.stderr)
	}
}

func TestMissingArangoDatabaseIsAUsageError(t *testing.T) {
	t.Parallel()
	r := runWo(t, "", "", "show", "task_a", "--store", "arangodb+http://127.0.0.1:1", "--database", "")
	if r.code != ExitInvalid || !strings.Contains(r.stderr, "pass --database or set WO_DATABASE") {
		t.Errorf("no database: exit %d: %s", r.code, r.stderr)
	}
	// A loopback server that answers as ArangoDB does for a database it
	// does not have.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error":true,"code":404,"errorNum":1228,"errorMessage":"database not found"}`)
	}))
	defer srv.Close()
	url := "arangodb+" + srv.URL
	r = runWo(t, "", "", "show", "task_a", "--store", url, "--database", "nope")
	if r.code != ExitInvalid || !strings.Contains(r.stderr, `has no database "nope": create it, or set --database / WO_DATABASE`) {
		t.Errorf("missing database: exit %d: %s", r.code, r.stderr)
	}
}
