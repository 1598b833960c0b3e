package version

// releaseCommit is the commit of a released module: scripts/release.sh writes it into this
// file of the halolang.dev/halo module it publishes (the module proxy tree), so a halo built
// by `go install halolang.dev/halo/cmd/halo@vX.Y.Z` knows its commit. Empty in a checkout.
const releaseCommit = ""
