package split

import (
	"go/parser"
	"go/token"
	"strconv"
	"strings"

	"golang.org/x/mod/modfile"
)

// goImports returns the import paths of a Go source file; a file that does
// not parse has none (its package still groups by directory).
func goImports(name string, src []byte) []string {
	f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(f.Imports))
	for _, imp := range f.Imports {
		if p, err := strconv.Unquote(imp.Path.Value); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// modulePath reads the module path of a go.mod file.
func modulePath(gomod []byte) string {
	return modfile.ModulePath(gomod)
}

// packageDir maps an import path inside the module to its directory, or
// "" for an import from outside the module.
func packageDir(module, importPath string) string {
	if module == "" {
		return ""
	}
	if importPath == module {
		return "."
	}
	if rest, ok := strings.CutPrefix(importPath, module+"/"); ok {
		return rest
	}
	return ""
}
