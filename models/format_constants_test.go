package models

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestFormatConstantsMatchTheStore: transfer (the export format) imports
// nothing, so it writes the store's roles and scopes again; an import
// copies them into rows as they are. Every Role* and Scope* constant of
// either package must be in the other, with the same value.
func TestFormatConstantsMatchTheStore(t *testing.T) {
	store := stringConsts(t, ".", "Role", "Scope")
	delete(store, "RoleTitle") // a search hit's role, never a log entry's
	format := stringConsts(t, "../transfer", "Role", "Scope")
	if len(store) == 0 || len(format) == 0 {
		t.Fatalf("found %d constants in models, %d in transfer", len(store), len(format))
	}
	for _, name := range slices.Sorted(maps.Keys(store)) {
		if got, ok := format[name]; !ok {
			t.Errorf("models.%s = %q has no transfer.%s", name, store[name], name)
		} else if got != store[name] {
			t.Errorf("models.%s = %q, transfer.%s = %q", name, store[name], name, got)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(format)) {
		if _, ok := store[name]; !ok {
			t.Errorf("transfer.%s = %q has no models.%s", name, format[name], name)
		}
	}
}

// stringConsts reads the Go files of dir (tests left out) and returns their
// string constants whose names start with one of prefixes.
func stringConsts(t *testing.T, dir string, prefixes ...string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i >= len(vs.Values) || !hasPrefix(n.Name, prefixes) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out[n.Name] = v
				}
			}
		}
	}
	return out
}

func hasPrefix(s string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(s, p) })
}
