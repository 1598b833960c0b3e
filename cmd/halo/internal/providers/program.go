package providers

import (
	"strings"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/diagtext"
	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/tool"
)

// A RegistryFunc builds the tool registry of the project in dir. Commands keep one in their
// options so tests can register fakes; nil means Build's registry.
type RegistryFunc func(f *cmdutil.Factory, dir string) (*tool.Registry, error)

// Registry builds the registry of the working folder's project with build, or with Build
// when build is nil.
func Registry(f *cmdutil.Factory, build RegistryFunc) (*tool.Registry, error) {
	if build != nil {
		return build(f, f.Dir)
	}
	set, err := Build(f, f.Dir)
	if err != nil {
		return nil, err
	}
	return set.Registry, nil
}

// LoadProgram is how every command that runs pipelines reads them: it loads the files and
// folders of paths, builds the working folder's registry, and validates the program with it
// exactly as halo validate does (runtime.Validate). Diagnostics go to stderr, all of them;
// a program with errors is a silent ExitFailed, since they were printed.
func LoadProgram(f *cmdutil.Factory, paths []string, build RegistryFunc) (*lang.Program, *tool.Registry, error) {
	prog, diags := lang.Load(f.Dir, paths)
	if diags.HasErrors() {
		diagtext.Print(f, diags, prog.Source)
		return nil, nil, cmdutil.Silent(cmdutil.ExitFailed)
	}
	if len(prog.Files) == 0 {
		return nil, nil, errcode.New(lang.CodeIO, "%s: no .halo file", strings.Join(paths, ", "))
	}
	reg, err := Registry(f, build)
	if err != nil {
		return nil, nil, err
	}
	if diags := runtime.Validate(prog, reg); diags.HasErrors() {
		diagtext.Print(f, diags, prog.Source)
		return nil, nil, cmdutil.Silent(cmdutil.ExitFailed)
	}
	return prog, reg, nil
}
