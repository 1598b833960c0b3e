package providers

import (
	"testing"

	"github.com/hashicorp/go-hclog"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
)

// A command's runs share one provider per model reference, as the runtime's default opener
// does: a warm halo serve encodes the tools it offers once, not once a run. An opening that
// fails is not kept: a key set later is found.
func TestModelsOpensEachReferenceOnce(t *testing.T) {
	f := &cmdutil.Factory{Env: cmdutil.Env{"OPENAI_API_KEY": "sk-test"}, Logger: hclog.NewNullLogger()}
	open := Models(f)
	first, _, err := open("openai/gpt-4o-mini")
	if err != nil {
		t.Fatal(err)
	}
	again, _, _ := open("openai/gpt-4o-mini")
	other, _, _ := open("openai/gpt-4o")
	if again != first || other == first {
		t.Errorf("openai/gpt-4o-mini twice: the same provider %v; another model: a provider of its own %v", again == first, other != first)
	}
	if _, _, err := open("anthropic/claude-3-5-haiku-latest"); err == nil {
		t.Fatal("anthropic without a key opened")
	}
	f.Env["ANTHROPIC_API_KEY"] = "sk-test"
	if _, _, err := open("anthropic/claude-3-5-haiku-latest"); err != nil {
		t.Errorf("anthropic once its key is set: %v", err)
	}
}
