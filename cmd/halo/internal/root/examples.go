package root

import "github.com/spf13/cobra"

// builtinExamples gives the commands cobra adds (help, completion and its shells) their
// Examples, as every command of halo has.
func builtinExamples(root *cobra.Command) {
	examples := map[string]string{
		"help": `  halo help run
  halo help trust key add`,
		"completion": `  source <(halo completion bash)
  halo completion zsh > "${fpath[1]}/_halo"
  halo completion fish > ~/.config/fish/completions/halo.fish`,
		"completion bash": `  source <(halo completion bash)
  halo completion bash > /etc/bash_completion.d/halo`,
		"completion zsh": `  halo completion zsh > "${fpath[1]}/_halo"
  source <(halo completion zsh)`,
		"completion fish": `  halo completion fish | source
  halo completion fish > ~/.config/fish/completions/halo.fish`,
		"completion powershell": `  halo completion powershell | Out-String | Invoke-Expression
  halo completion powershell > halo.ps1`,
	}
	for _, c := range root.Commands() {
		for _, cmd := range append([]*cobra.Command{c}, c.Commands()...) {
			path := cmd.Name()
			if cmd != c {
				path = c.Name() + " " + cmd.Name()
			}
			if ex, ok := examples[path]; ok && cmd.Example == "" {
				cmd.Example = ex
			}
		}
	}
}
