// Package pluginv1 owns version 1 of the contract between the Halo host and a tool-provider
// plugin: plugin.proto (the specification for authors in any language), the Go code generated
// from it, and the go-plugin handshake values both sides must agree on. The SDK
// (github.com/halo-lang/halo/sdk) and the host's client (host/tool/plugin) are its only users;
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
)
