// Command worldtime is the WorldTime plugin executable: the Halo host starts it and calls the
// provider over gRPC. Run by hand it explains that and exits.
package main

import (
	"time"

	"halolang.dev/halo/plugins/worldtime"
	"halolang.dev/halo/sdk"
)

func main() {
	sdk.Serve(worldtime.New(time.Now))
}
