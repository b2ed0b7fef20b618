//go:build !linux

package plan

// Read is Read for the plan file at path, parsed every time (the Linux
// version keeps it while the file's stat does not change).
func (c *Cache) Read(path string) (*Plan, []string, error) {
	*c = Cache{}
	return Read(path)
}
