package main

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/invalid"
)

// moduleRoot is where the module's sources are, from this package's
// directory (go test runs in it).
const moduleRoot = "../.."

// declaredFields parses invalid/fields.go: the name and value of every
// constant of type Field.
func declaredFields(t *testing.T) map[string]invalid.Field {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(moduleRoot, "invalid", "fields.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]invalid.Field{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Field" {
				continue
			}
			for i, n := range v.Names {
				lit, ok := v.Values[i].(*ast.BasicLit)
				if !ok {
					t.Fatalf("field %s: want a string literal", n.Name)
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				out[n.Name] = invalid.Field(s)
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no fields declared in invalid/fields.go")
	}
	return out
}

// commandFlags are the flags every command defines, as its help lists
// them.
func commandFlags(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	line := regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`)
	for _, c := range commands() {
		var stdout, stderr bytes.Buffer
		Main(context.Background(), []string{c.name, "-h"}, &stdout, &stderr)
		for _, m := range line.FindAllStringSubmatch(stdout.String()+stderr.String(), -1) {
			out["--"+m[1]] = true
		}
	}
	return out
}

// librarySources calls fn with every non-test Go file of the module
// outside cmd/ and invalid/.
func librarySources(t *testing.T, fn func(path string, f *ast.File)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(moduleRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(moduleRoot, path)
		if d.IsDir() {
			if rel == "cmd" || rel == "invalid" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		fn(filepath.ToSlash(rel), f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Every field the library can name in an invalid.Error has its line in
// flagOf, every flag there is one a command defines, every field is
// named by the library as a declared constant (a literal would escape
// this walk), and none is declared but never used.
func TestFlagOfEveryField(t *testing.T) {
	declared := declaredFields(t)
	known := map[invalid.Field]bool{}
	for name, f := range declared {
		known[f] = true
		if _, ok := flagOf[f]; !ok {
			t.Errorf("invalid.%s (%q) has no line in flagOf", name, f)
		}
	}
	flags := commandFlags(t)
	for f, flag := range flagOf {
		if !known[f] {
			t.Errorf("flagOf maps %q, which invalid/fields.go does not declare", f)
		}
		for _, fl := range strings.Split(flag, " and ") {
			if fl != "" && !flags[fl] {
				t.Errorf("flagOf maps %q to %s, which no command defines", f, fl)
			}
		}
	}
	used := map[string]bool{}
	librarySources(t, func(path string, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			var arg ast.Expr
			switch n := n.(type) {
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && isInvalidPkg(sel.X) && (sel.Sel.Name == "New" || sel.Sel.Name == "Wrap") && len(n.Args) > 0 {
					arg = n.Args[0]
				}
			case *ast.KeyValueExpr:
				if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Field" {
					if sel, ok := n.Value.(*ast.SelectorExpr); ok && isInvalidPkg(sel.X) {
						arg = n.Value
					}
				}
			}
			if arg == nil {
				return true
			}
			sel, ok := arg.(*ast.SelectorExpr)
			if !ok || !isInvalidPkg(sel.X) {
				t.Errorf("%s: an invalid.Error's field given as %T, want a field of invalid/fields.go", path, arg)
				return true
			}
			used[sel.Sel.Name] = true
			return true
		})
	})
	for name := range declared {
		if !used[name] {
			t.Errorf("invalid.%s is declared but no package names it: delete it and its line in flagOf", name)
		}
	}
}

func isInvalidPkg(x ast.Expr) bool {
	id, ok := x.(*ast.Ident)
	return ok && id.Name == "invalid"
}

// The library speaks in its own words: no string below cmd/ names a
// flag. The one exception starts this command as a child process.
func TestNoFlagBelowCmd(t *testing.T) {
	flag := regexp.MustCompile(`(^|[^-\w])--[a-z]`)
	librarySources(t, func(path string, f *ast.File) {
		if path == "noop/process.go" {
			return // runs `freshbench noop --http-listen …`
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if ok && lit.Kind == token.STRING && flag.MatchString(lit.Value) {
				t.Errorf("%s: %s names a flag; name the library's field (invalid.Field) and map it in cmd", path, lit.Value)
			}
			return true
		})
	})
}

// The message a user reads names the flag, not the library's field.
func TestInFlagWords(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{invalid.New(invalid.BatchSize, 0, "1 or more"), "--batch-size 0: want 1 or more"},
		{invalid.New(invalid.SweepMax, 5, "at least the sweep's start, 10"), "--sweep-max 5: want at least the sweep's start, 10"},
		{invalid.New(invalid.SampleSize, -1, "0 or more documents"), "sample size -1: want 0 or more documents"},
	} {
		if got := inFlagWords(c.err); got != c.want {
			t.Errorf("inFlagWords(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
