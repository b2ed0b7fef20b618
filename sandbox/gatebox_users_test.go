//go:build linux

package sandbox

// The server's own tests run it as an ordinary user too.
func init() { serverForUsers = true }
