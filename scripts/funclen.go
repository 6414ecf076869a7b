//go:build ignore

// funclen lists the functions over 80 lines outside tests and generated
// files, and exits 1 if there is one that is not an exception below.
//
//	go run scripts/funclen.go
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

const maxLines = 80

// exceptions are the functions allowed over maxLines, by file and name;
// each one's doc says why it stays whole.
var exceptions = map[string]bool{
	"docgen/program.go run": true, // the template interpreter: one loop and one switch over its ops, the hot path of every template
}

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	over, err := scan(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(2)
	}
	for _, o := range over {
		fmt.Println(o)
	}
	if len(over) > 0 {
		os.Exit(1)
	}
}

// scan returns one line for each function over maxLines under root that
// is not an exception.
func scan(root string) ([]string, error) {
	var over []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			start, end := fset.Position(fn.Pos()), fset.Position(fn.End())
			n := end.Line - start.Line + 1
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			if n > maxLines && !exceptions[filepath.ToSlash(rel)+" "+fn.Name.Name] {
				over = append(over, fmt.Sprintf("%s:%d: %s is %d lines (over %d)", path, start.Line, fn.Name.Name, n, maxLines))
			}
		}
		return nil
	})
	return over, err
}
