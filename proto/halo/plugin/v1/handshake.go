// Package pluginv1 owns version 1 of the contract between the Halo host and a tool-provider
// plugin: plugin.proto (the specification for authors in any language), the Go code generated
// from it, and the go-plugin handshake values both sides must agree on. The SDK
// (halolang.dev/halo/sdk) and the host's client (host/tool/plugin) are its only users;
// plugin authors never import it.
package pluginv1

const (
	// ProtocolVersion is the application protocol version this contract defines. A breaking
	// change to plugin.proto adds a v2 package and a new version; a host refuses a plugin that
	// speaks only versions it does not know, and says so.
	ProtocolVersion = 1

	// MagicCookieKey and MagicCookieValue mark a process started by a Halo host. They are not
	// a secret or a security measure: they stop a user from running a plugin by hand and
	// getting a confusing handshake line.
	MagicCookieKey   = "HALO_PLUGIN_MAGIC_COOKIE"
	MagicCookieValue = "7c1d2f0e-halo-plugin-8a4b6e93"

	// PluginName is the key of the plugin in go-plugin's plugin set, on both sides.
	PluginName = "provider"

	// TokenEnv is the variable through which the host hands a plugin the secret of its
	// connection, new for every process it starts (64 hexadecimal digits). TokenMetadata is the
	// gRPC metadata key the host sends it under with every call of every service on the
	// connection, go-plugin's included. A plugin refuses any call without it
	// (UNAUTHENTICATED), so no other process that reaches its socket (another plugin reads
	// its path in /proc/net/unix) can configure or call it; it removes the variable from its
	// environment at start, so programs it starts do not inherit it. A plugin started without
	// the variable (by sdktest, say) authenticates nothing.
	TokenEnv      = "HALO_PLUGIN_TOKEN"
	TokenMetadata = "halo-plugin-token"
)
