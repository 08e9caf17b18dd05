package main

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"go/token"
	"go/types"
	"io"
	"os"
	"strings"

	"golang.org/x/exp/apidiff"
	"golang.org/x/tools/go/gcexportdata"
)

// The file format is apidiff's (golang.org/x/exp/cmd/apidiff -m -w): a zip
// archive whose entry "module" holds the module path and whose entry
// PKGPATH.x holds the export data of one package. Export data carries
// what the package needs of its imports, so each entry is read alone.

func readExportData(fset *token.FileSet, name string) (*apidiff.Module, error) {
	z, err := zip.OpenReader(name)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	m := &apidiff.Module{}
	for _, f := range z.File {
		data, err := readEntry(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		if f.Name == "module" {
			m.Path = string(data)
			continue
		}
		path, ok := strings.CutSuffix(f.Name, ".x")
		if !ok {
			return nil, fmt.Errorf("%s: unexpected entry %q", name, f.Name)
		}
		p, err := gcexportdata.Read(bytes.NewReader(data), fset, map[string]*types.Package{}, path)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %v", name, path, err)
		}
		m.Packages = append(m.Packages, p)
	}
	if m.Path == "" {
		return nil, fmt.Errorf("%s: no module path", name)
	}
	return m, nil
}

func readEntry(f *zip.File) ([]byte, error) {
	r, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

func writeExportData(fset *token.FileSet, m *apidiff.Module, name string) (err error) {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	z := zip.NewWriter(f)
	w, err := z.Create("module")
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, m.Path); err != nil {
		return err
	}
	for _, p := range m.Packages {
		w, err := z.Create(p.Path() + ".x")
		if err != nil {
			return err
		}
		if err := gcexportdata.Write(w, fset, p); err != nil {
			return fmt.Errorf("%s: %v", p.Path(), err)
		}
	}
	return z.Close()
}
