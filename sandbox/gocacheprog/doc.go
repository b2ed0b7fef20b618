// Package gocacheprog is a GOCACHEPROG program (Go 1.24+) for the checks
// of a Landlock box: a union of the box's own build cache, read and
// written, and the user's, read-only. See Server.
package gocacheprog
