// Command codemetrics measures what issue #39 asks of wo's code, from its
// syntax trees (go/ast, no type checking), and says which of the issue's
// thresholds hold:
//
//	go run ./scripts/codemetrics            # report: every figure, met or not; exits 0
//	go run ./scripts/codemetrics -check     # the same, and exits 1 if a threshold is broken
//	go run ./scripts/codemetrics -top 20    # also the 20 most complex functions
//
// It reads the module in the current folder (or -root): every .go file
// but those under testdata, hidden folders and other modules (tools/).
// Functions are the declared functions and methods of non-test files;
// cyclomatic complexity is gocyclo's count, closures counted with the
// function that holds them (a closure outside any function, in a table
// such as commands' stateWords, is not counted); a function's lines run
// from its func keyword to its closing brace. The procedure figure is every line (comments and
// blank lines too, as wc -l counts them) of the non-test .go files
// directly in procedure/, not its subfolders. The two leaks look at test
// files too, as git grep does.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// The thresholds of issue #39.
const (
	maxCyclo          = 30
	maxLongShare      = 3.0 // percent of functions
	longFunc          = 60  // lines; a function over this is long
	maxMethods        = 12
	maxProcedureLines = 3000
)

func main() {
	check := flag.Bool("check", false, "exit 1 when a threshold is broken (the default only reports)")
	top := flag.Int("top", 5, "list the `N` most complex functions")
	root := flag.String("root", ".", "the module's root `folder`")
	flag.Parse()
	module, err := modulePath(filepath.Join(*root, "go.mod"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "codemetrics:", err)
		os.Exit(2)
	}
	files, fset, err := loadModule(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "codemetrics:", err)
		os.Exit(2)
	}
	broken := report(os.Stdout, measure(files, fset, module), *top)
	switch {
	case broken == 0:
		fmt.Println("codemetrics: every threshold holds")
	case *check:
		fmt.Printf("codemetrics: %d of 6 thresholds broken\n", broken)
		os.Exit(1)
	default:
		fmt.Printf("codemetrics: %d of 6 thresholds broken (report mode: not a failure; -check makes it one)\n", broken)
	}
}

func modulePath(gomod string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`), nil
		}
	}
	return "", fmt.Errorf("%s names no module", gomod)
}

// A check is one threshold: its figure, whether it holds, and the places
// that break it.
type check struct {
	what   string
	figure string
	limit  string
	ok     bool
	detail []string
}

// report writes one line per threshold, met or not, and returns how many
// are broken.
func report(w io.Writer, fig Figures, top int) int {
	broken := 0
	for _, c := range checks(fig, top) {
		mark := "met    "
		if !c.ok {
			mark = "NOT MET"
			broken++
		}
		fmt.Fprintf(w, "%s  %-28s %s (threshold %s)\n", mark, c.what, c.figure, c.limit)
		for _, d := range c.detail {
			fmt.Fprintf(w, "           %s\n", d)
		}
	}
	return broken
}

func checks(fig Figures, top int) []check {
	return []check{cycloCheck(fig, top), longCheck(fig), interfaceCheck(fig), {
		what: "lines in procedure/", figure: fmt.Sprint(fig.ProcedureLines), limit: fmt.Sprintf("≤ %d", maxProcedureLines),
		ok: fig.ProcedureLines <= maxProcedureLines,
	}, leakCheck("commands naming gitops", fig.CommandsGitops), leakCheck("gitops importing workorder", fig.GitopsImports)}
}

func cycloCheck(fig Figures, top int) check {
	c := check{what: "max cyclomatic complexity", figure: "no functions", limit: fmt.Sprintf("≤ %d", maxCyclo), ok: true}
	if len(fig.Funcs) == 0 {
		return c
	}
	worst := fig.Funcs[0]
	c.figure = fmt.Sprintf("%d, %s in %s", worst.Cyclo, worst.Name, worst.File)
	c.ok = worst.Cyclo <= maxCyclo
	over := 0
	for _, f := range fig.Funcs {
		if f.Cyclo > maxCyclo {
			over++
		}
	}
	c.figure += fmt.Sprintf("; %d functions over %d", over, maxCyclo)
	for _, f := range fig.Funcs[:min(top, len(fig.Funcs))] {
		c.detail = append(c.detail, fmt.Sprintf("%4d  %s (%s:%d, %d lines)", f.Cyclo, f.Name, f.File, f.Line, f.Lines))
	}
	return c
}

func longCheck(fig Figures) check {
	long := 0
	for _, f := range fig.Funcs {
		if f.Lines > longFunc {
			long++
		}
	}
	share := 0.0
	if len(fig.Funcs) > 0 {
		share = 100 * float64(long) / float64(len(fig.Funcs))
	}
	return check{what: fmt.Sprintf("functions over %d lines", longFunc), figure: fmt.Sprintf("%d of %d, %.2f%%", long, len(fig.Funcs), share),
		limit: fmt.Sprintf("≤ %.0f%%", maxLongShare), ok: share <= maxLongShare}
}

func interfaceCheck(fig Figures) check {
	c := check{what: "widest interface", figure: "no interfaces", limit: fmt.Sprintf("≤ %d methods", maxMethods), ok: true}
	if len(fig.Interfaces) == 0 {
		return c
	}
	widest := fig.Interfaces[0]
	c.figure = fmt.Sprintf("%s, %d methods", widest.Name, widest.Methods)
	for _, it := range fig.Interfaces {
		if it.Methods > maxMethods {
			c.ok = false
			c.detail = append(c.detail, fmt.Sprintf("%4d  %s (%s)", it.Methods, it.Name, it.File))
		}
	}
	return c
}

func leakCheck(what string, uses []Use) check {
	c := check{what: what, figure: "none", limit: "none", ok: len(uses) == 0}
	if len(uses) > 0 {
		c.figure = fmt.Sprintf("%d places", len(uses))
	}
	for _, u := range uses {
		c.detail = append(c.detail, fmt.Sprintf("%s:%d %s", u.File, u.Line, u.What))
	}
	return c
}
