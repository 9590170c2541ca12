package layers

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/etwemu/etwemu/"

// Every package of the module is in Of, and each non-test file imports only packages of
// its own layer or below.
func TestImportsFlowDown(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	imports := packageImports(t, root)
	if len(imports) < 20 {
		t.Fatalf("found %d packages under %s: the walk missed the module", len(imports), root)
	}
	for _, v := range violations(imports, Of) {
		t.Error(v)
	}
}

// violations lists the packages of imports that of gives no layer, the imports that go
// up a layer, and the packages of that no directory holds.
func violations(imports map[string][]string, of map[string]Layer) []string {
	var out []string
	var names []string
	for p := range imports {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		from, ok := of[p]
		if !ok {
			out = append(out, "package "+p+" has no layer: add it to layers.Of")
			continue
		}
		for _, imp := range imports[p] {
			if to, ok := of[imp]; ok && to > from {
				out = append(out, p+" ("+from.String()+") imports "+imp+" ("+to.String()+"): dependencies flow down only")
			}
		}
	}
	for p := range of {
		if _, ok := imports[p]; !ok {
			out = append(out, "layers.Of names "+p+", which is no package of the module")
		}
	}
	return out
}

// The check reports an import that goes up (a leaf importing the kernel), a package
// with no layer and a layer given to no package.
func TestViolations(t *testing.T) {
	of := map[string]Layer{"etl": Leaf, "emu": Kernel, "gone": Leaf}
	got := violations(map[string][]string{"etl": {"emu"}, "emu": {"etl"}, "new": nil}, of)
	want := []string{
		"etl (leaves) imports emu (the kernel): dependencies flow down only",
		"package new has no layer: add it to layers.Of",
		"layers.Of names gone, which is no package of the module",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// packageImports returns, for every package directory of the module (by its path in the
// module; not bench/peers, a module of its own, nor testdata), the module's packages its
// non-test files import.
func packageImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			base := d.Name()
			if rel != "." && (strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") || base == "testdata") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && rel != "." {
				return filepath.SkipDir // another module (bench/peers)
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(rel))
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil
		}
		for _, is := range f.Imports {
			p, _ := strconv.Unquote(is.Path.Value)
			if strings.HasPrefix(p, module) {
				out[pkg] = append(out[pkg], strings.TrimPrefix(p, module))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
