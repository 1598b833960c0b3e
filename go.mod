module github.com/halo-lang/halo

go 1.26

require (
	github.com/hashicorp/go-hclog v1.6.3
	github.com/mattn/go-isatty v0.0.24
	github.com/rogpeppe/go-internal v1.16.0
	github.com/spf13/cobra v1.10.2
)

require (
	github.com/fatih/color v1.13.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/mattn/go-colorable v0.1.12 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	golang.org/x/sys v0.28.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
)
