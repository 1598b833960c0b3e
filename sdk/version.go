package sdk

// Version is this SDK's version. The SDK is its own Go module, halolang.dev/halo/sdk,
// released with tags sdk/vX.Y.Z in the Halo repository (the plugin contract it speaks,
// halolang.dev/halo/proto, with tags proto/vX.Y.Z). `halo plugin init` writes a
// go.mod that requires this version.
const Version = "0.1.0"
