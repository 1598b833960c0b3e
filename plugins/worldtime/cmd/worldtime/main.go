// Command worldtime is the WorldTime plugin executable: the Halo host starts it and calls the
// provider over gRPC. Run by hand it explains that and exits.
package main

import (
	"time"

	"github.com/halo-lang/halo/plugins/worldtime"
	"github.com/halo-lang/halo/sdk"
)

func main() {
	sdk.Serve(worldtime.New(time.Now))
}
