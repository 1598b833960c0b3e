package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"halolang.dev/halo/sdk"
)

// Name is the provider name declarations use: `tool Files : Workspace("./notes", write: true)`.
const Name = "Workspace"

// Options are a Workspace declaration's arguments.
type Options struct {
	// Root is the folder the tool works in; relative to the project folder.
	Root string `json:"root"`
	// Write enables write, edit and delete.
	Write bool `json:"write,omitempty"`
}

// ParseOptions reads a declaration: Workspace(root, write: bool). The host reads it the same
// way to decide what the sandbox grants.
func ParseOptions(d sdk.Declaration) (Options, error) {
	var o Options
	if err := d.Decode(&o, "root"); err != nil {
		return o, err
	}
	if o.Root == "" {
		return o, errors.New(`Workspace needs a root folder: Workspace("./notes")`)
	}
	if !filepath.IsAbs(o.Root) {
		o.Root = filepath.Join(d.ProjectDir, o.Root)
	}
	o.Root = filepath.Clean(o.Root)
	return o, nil
}

type readParams struct {
	Path   string `json:"path" jsonschema:"description=File path relative to the workspace root"`
	Offset int64  `json:"offset,omitempty" jsonschema:"description=Byte offset to start reading at (for files cut by an earlier read),minimum=0"`
}

type writeParams struct {
	Path    string `json:"path" jsonschema:"description=File path relative to the workspace root; missing folders are created"`
	Content string `json:"content" jsonschema:"description=The whole new content of the file"`
}

type editParams struct {
	Path string `json:"path" jsonschema:"description=File path relative to the workspace root"`
	Old  string `json:"old" jsonschema:"description=The exact text to replace; it must occur exactly once in the file"`
	New  string `json:"new" jsonschema:"description=The text to put in its place"`
}

type listParams struct {
	Path      string `json:"path,omitempty" jsonschema:"description=Folder relative to the workspace root; the root when empty"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"description=List the whole tree below the folder (skipping .git)"`
}

type searchParams struct {
	Pattern string `json:"pattern" jsonschema:"description=Regular expression (Go RE2 syntax) matched against each line"`
	Path    string `json:"path,omitempty" jsonschema:"description=Folder or file to search in; the root when empty"`
}

type deleteParams struct {
	Path      string `json:"path" jsonschema:"description=File or folder relative to the workspace root"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"description=Delete a folder and everything in it"`
}

// writing are the methods a read-only workspace leaves out.
var writing = map[string]bool{"write": true, "edit": true, "delete": true}

// Offers reports whether a declaration with write: as given offers method: a read-only
// workspace leaves out write, edit and delete. The host describes a declaration by it without
// starting the plugin, so what it offers is what Configure offers.
func Offers(write bool, method string) bool { return write || !writing[method] }

// fail turns a Failure into the SDK's domain failure, which the model reads as the result.
func fail(err error) error {
	var f *Failure
	if errors.As(err, &f) {
		return sdk.Fail("%s", f.Message)
	}
	return err
}

func method[P, R any](name, desc string, effect sdk.Effect, fn func(w *Workspace, p P) (R, error)) sdk.Method {
	return sdk.NewMethod(name, desc, effect, func(c *sdk.Call, p P) (R, error) {
		r, err := fn(sdk.StateOf[*Workspace](c), p)
		return r, fail(err)
	})
}

// Methods describes every Workspace method; a read-only declaration offers the read ones.
func Methods() []sdk.Method {
	return []sdk.Method{
		method("read", "Read a text file in the workspace. Returns its content and line count; files over 1 MB are cut, with a note giving the offset to read on from.", sdk.Read,
			func(w *Workspace, p readParams) (ReadResult, error) { return w.Read(p.Path, p.Offset) }),
		method("list", "List a folder of the workspace: each entry's path, type (file, dir, symlink) and size.", sdk.Read,
			func(w *Workspace, p listParams) (ListResult, error) { return w.List(p.Path, p.Recursive) }),
		method("search", "Search the text files of the workspace for lines matching a regular expression. Returns up to 200 matches with path and line number.", sdk.Read,
			func(w *Workspace, p searchParams) (SearchResult, error) { return w.Search(p.Pattern, p.Path) }),
		method("write", "Create a file or replace its whole content.", sdk.Write,
			func(w *Workspace, p writeParams) (WriteResult, error) { return w.Write(p.Path, p.Content) }),
		method("edit", "Replace one exact piece of text in a file with another. The old text must occur exactly once; include surrounding lines to make it unique.", sdk.Write,
			func(w *Workspace, p editParams) (EditResult, error) { return w.Edit(p.Path, p.Old, p.New) }),
		method("delete", "Delete a file or an empty folder (recursive: true deletes a folder with its contents).", sdk.Write,
			func(w *Workspace, p deleteParams) (DeleteResult, error) { return w.Delete(p.Path, p.Recursive) }),
	}
}

// Provider returns the Workspace provider the plugin serves.
func Provider() sdk.Provider {
	methods := Methods()
	return sdk.Provider{
		Name:        Name,
		Description: "Files under one root folder: read, list, search; with write: true also write, edit, delete",
		Methods:     methods,
		Configure: func(ctx context.Context, d sdk.Declaration) (sdk.Instance, error) {
			o, err := ParseOptions(d)
			if err != nil {
				return sdk.Instance{}, err
			}
			st, err := os.Stat(o.Root)
			if err != nil {
				return sdk.Instance{}, fmt.Errorf("Workspace root %s: %w", o.Root, err)
			}
			if !st.IsDir() {
				return sdk.Instance{}, fmt.Errorf("Workspace root %s is not a folder", o.Root)
			}
			w, err := Open(o.Root, o.Write, DefaultLimits)
			if err != nil {
				return sdk.Instance{}, err
			}
			inst := sdk.Instance{State: w}
			if !o.Write {
				for _, m := range methods {
					if Offers(o.Write, m.Name) {
						inst.Methods = append(inst.Methods, m.Name)
					}
				}
			}
			return inst, nil
		},
	}
}
