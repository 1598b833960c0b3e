//go:build windows

package sandbox

// Halo is built for Linux and macOS (README.md, "Platforms"): a plugin's sandbox, and the
// descriptors and process groups it closes and kills, have no Windows version. This stops a
// Windows build with a name that says so, where it would otherwise fail on a type mismatch.
var _ = halo_builds_for_linux_and_macos_only__see_README_Platforms
