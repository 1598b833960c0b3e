package halo_test

import (
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"halolang.dev/halo/host/debug"
)

// The VS Code extension's launch configuration offers what `halo debug --dap` reads from a
// launch request: every property is a field of debug.LaunchArgs, and every field a property.
func TestVSCodeLaunchAttributes(t *testing.T) {
	b, err := os.ReadFile("editors/vscode/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Contributes struct {
			Debuggers []struct {
				Type                    string `json:"type"`
				ConfigurationAttributes struct {
					Launch struct {
						Required   []string                   `json:"required"`
						Properties map[string]json.RawMessage `json:"properties"`
					} `json:"launch"`
				} `json:"configurationAttributes"`
				InitialConfigurations []map[string]any `json:"initialConfigurations"`
			} `json:"debuggers"`
		} `json:"contributes"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	if len(pkg.Contributes.Debuggers) != 1 || pkg.Contributes.Debuggers[0].Type != "halo" {
		t.Fatalf("debuggers: %+v", pkg.Contributes.Debuggers)
	}
	d := pkg.Contributes.Debuggers[0]
	var offered []string
	for k := range d.ConfigurationAttributes.Launch.Properties {
		offered = append(offered, k)
	}
	var read []string
	lt := reflect.TypeOf(debug.LaunchArgs{})
	for i := 0; i < lt.NumField(); i++ {
		name, _, _ := strings.Cut(lt.Field(i).Tag.Get("json"), ",")
		read = append(read, name)
	}
	sort.Strings(offered)
	sort.Strings(read)
	if !reflect.DeepEqual(offered, read) {
		t.Errorf("package.json offers %v; halo debug --dap reads %v", offered, read)
	}
	if r := d.ConfigurationAttributes.Launch.Required; len(r) != 1 || r[0] != "program" {
		t.Errorf("required %v", r)
	}
	for _, c := range d.InitialConfigurations {
		for k := range c {
			if k != "type" && k != "request" && k != "name" && d.ConfigurationAttributes.Launch.Properties[k] == nil {
				t.Errorf("the initial configuration sets %s, which is not a launch property", k)
			}
		}
	}
}
