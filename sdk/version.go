package sdk

// Version is this SDK's version. The SDK is its own Go module, github.com/halo-lang/halo/sdk,
// released with tags sdk/vX.Y.Z in the Halo repository (the plugin contract it speaks,
// github.com/halo-lang/halo/proto, with tags proto/vX.Y.Z). `halo plugin init` writes a
// go.mod that requires this version.
const Version = "0.1.0"
