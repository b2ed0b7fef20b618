//go:build linux

package gocacheprog

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Arg is the only argument the engine's executable is started with as
// the cache program (with EnvDirs set): see Command.
const Arg = "looprinter-gocacheprog"

// EnvDirs holds the program's folders (JSON: {"own": …, "user": …}).
const EnvDirs = "LOOPRINTER_GOCACHEPROG"

// MaxBody bounds the size of an object a put may store (1 GiB).
const MaxBody = 1 << 30

func init() {
	if len(os.Args) == 2 && os.Args[1] == Arg {
		if v, ok := os.LookupEnv(EnvDirs); ok {
			os.Exit(progMain(v))
		}
	}
}

type dirs struct {
	Own  string `json:"own"`
	User string `json:"user"`
}

func progMain(v string) int {
	var d dirs
	if err := json.Unmarshal([]byte(v), &d); err != nil || !filepath.IsAbs(d.Own) {
		fmt.Fprintf(os.Stderr, "looprinter gocacheprog: bad %s\n", EnvDirs)
		return 2
	}
	s := &Server{Own: d.Own, User: d.User}
	if err := s.Serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "looprinter gocacheprog: %v\n", err)
		return 1
	}
	return 0
}

// Command is the GOCACHEPROG value that starts exe as the cache program
// (exe must be this package's binary), and Env the environment entry
// naming its folders; ok is false for a path the go command cannot split
// back (a quote or a space of another kind in it).
func Command(exe, own, user string) (prog, env string, ok bool) {
	if strings.ContainsAny(exe, "'\"\t\n\r\v\f") {
		return "", "", false
	}
	data, err := json.Marshal(dirs{Own: own, User: user})
	if err != nil {
		return "", "", false
	}
	return "'" + exe + "' " + Arg, EnvDirs + "=" + string(data), true
}

// Server answers the go command's requests (cmd/go/internal/cacheprog):
// a get is served from Own, else from User (a folder Go itself filled,
// in its own on-disk layout, never written); a put is written to Own, in
// the same layout. Symbolic links are followed in neither (an entry
// reached through one is a miss), an output file whose size is not the
// entry's is a miss, and a put larger than MaxBody is refused. Own and
// User must be canonical.
type Server struct {
	Own, User string
	MaxBody   int64 // 0: MaxBody
}

type request struct {
	ID       int64
	Command  string
	ActionID []byte `json:",omitempty"`
	OutputID []byte `json:",omitempty"`
	BodySize int64  `json:",omitempty"`
}

type response struct {
	ID            int64
	Err           string     `json:",omitempty"`
	KnownCommands []string   `json:",omitempty"`
	Miss          bool       `json:",omitempty"`
	OutputID      []byte     `json:",omitempty"`
	Size          int64      `json:",omitempty"`
	Time          *time.Time `json:",omitempty"`
	DiskPath      string     `json:",omitempty"`
}

const hashSize = 32

// Serve reads requests from in and writes the responses to out until a
// close request or the end of in.
func (s *Server) Serve(in io.Reader, out io.Writer) error {
	r := bufio.NewReaderSize(in, 64<<10)
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	send := func(res *response) error {
		if err := enc.Encode(res); err != nil {
			return err
		}
		return w.Flush()
	}
	if err := send(&response{KnownCommands: []string{"get", "put", "close"}}); err != nil {
		return err
	}
	for {
		line, err := readLine(r)
		if err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		var req request
		if err := json.Unmarshal(line, &req); err != nil {
			return fmt.Errorf("bad request: %v", err)
		}
		res := &response{ID: req.ID}
		switch req.Command {
		case "get":
			s.get(req, res)
		case "put":
			if err := s.put(r, req, res); err != nil {
				return err
			}
		case "close":
			return send(res)
		default:
			if req.BodySize > 0 {
				return fmt.Errorf("unknown command %q with a body", req.Command)
			}
			res.Err = "unknown command " + strconv.Quote(req.Command)
		}
		if err := send(res); err != nil {
			return err
		}
	}
}

// readLine reads the next non-empty line (at most the reader's buffer).
func readLine(r *bufio.Reader) ([]byte, error) {
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return nil, errors.New("request line too long")
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			return append([]byte(nil), t...), nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (s *Server) get(req request, res *response) {
	if len(req.ActionID) != hashSize {
		res.Err = "bad ActionID"
		return
	}
	if e, ok := lookup(s.Own, req.ActionID); ok {
		res.OutputID, res.Size, res.Time, res.DiskPath = e.out, e.size, &e.time, e.path
		return
	}
	if s.User == "" {
		res.Miss = true
		return
	}
	e, ok := lookup(s.User, req.ActionID)
	if !ok {
		res.Miss = true
		return
	}
	res.OutputID, res.Size, res.Time, res.DiskPath = e.out, e.size, &e.time, s.link(e)
}

// link is a symbolic link in Own to the output file of a user's entry:
// the go command copies a file of its GOCACHE where it would move (and
// chmod) one from elsewhere. Without one, the user's file itself.
func (s *Server) link(e entry) string {
	x := hex.EncodeToString(e.out)
	fd, err := openDir(s.Own, x[:2], true)
	if err != nil {
		return e.path
	}
	defer unix.Close(fd)
	name := x + "-u"
	tmp := fmt.Sprintf(".%s.%d.%d", name, os.Getpid(), time.Now().UnixNano())
	if unix.Symlinkat(e.path, fd, tmp) != nil {
		return e.path
	}
	if unix.Renameat(fd, tmp, fd, name) != nil {
		unix.Unlinkat(fd, tmp, 0)
		return e.path
	}
	return filepath.Join(s.Own, x[:2], name)
}

type entry struct {
	out  []byte
	size int64
	time time.Time
	path string // the output file
}

// entrySize is the size of an action entry file: "v1 <hex id> <hex out>
// <size, 20 wide> <unixnano, 20 wide>\n" (cmd/go/internal/cache).
const entrySize = 2 + 1 + 2*hashSize + 1 + 2*hashSize + 1 + 20 + 1 + 20 + 1

// lookup reads the entry of action id in the Go build cache dir, and
// checks its output file: a regular file (no symbolic link on the way
// from dir) of the entry's size.
func lookup(dir string, id []byte) (entry, bool) {
	x := hex.EncodeToString(id)
	data, err := readNoFollow(dir, x[:2], x+"-a", entrySize+1)
	if err != nil || len(data) != entrySize {
		return entry{}, false
	}
	f := strings.Split(strings.TrimSuffix(string(data), "\n"), " ")
	if data[entrySize-1] != '\n' || len(f) < 5 || f[0] != "v1" || f[1] != x {
		return entry{}, false
	}
	// The size and the time are space-padded: the fields after the
	// output ID are the non-empty ones.
	var rest []string
	for _, v := range f[3:] {
		if v != "" {
			rest = append(rest, v)
		}
	}
	out, err := hex.DecodeString(f[2])
	if err != nil || len(out) != hashSize || len(rest) != 2 {
		return entry{}, false
	}
	size, err1 := strconv.ParseInt(rest[0], 10, 64)
	nano, err2 := strconv.ParseInt(rest[1], 10, 64)
	if err1 != nil || err2 != nil || size < 0 {
		return entry{}, false
	}
	o := hex.EncodeToString(out)
	fd, err := openDir(dir, o[:2], false)
	if err != nil {
		return entry{}, false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstatat(fd, o+"-d", &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size != size {
		return entry{}, false
	}
	return entry{out: out, size: size, time: time.Unix(0, nano), path: filepath.Join(dir, o[:2], o+"-d")}, true
}

// openDir opens dir's sub-folder sub without following a symbolic link
// (dir itself is canonical), making it with create.
func openDir(dir, sub string, create bool) (int, error) {
	root, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(root)
	if create {
		unix.Mkdirat(root, sub, 0o777)
	}
	return unix.Openat(root, sub, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
}

// readNoFollow reads at most max bytes of dir/sub/name, a regular file
// reached without a symbolic link.
func readNoFollow(dir, sub, name string, max int64) ([]byte, error) {
	d, err := openDir(dir, sub, false)
	if err != nil {
		return nil, err
	}
	defer unix.Close(d)
	fd, err := unix.Openat(d, name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	return io.ReadAll(io.LimitReader(f, max))
}

// put stores a put's body (base64 in a JSON string after the request)
// and its entry in Own.
func (s *Server) put(r *bufio.Reader, req request, res *response) error {
	max := s.MaxBody
	if max <= 0 {
		max = MaxBody
	}
	if req.BodySize < 0 || req.BodySize > max || len(req.ActionID) != hashSize || len(req.OutputID) != hashSize {
		if req.BodySize > 0 {
			if err := skipBody(r); err != nil {
				return err
			}
		}
		res.Err = fmt.Sprintf("refused: a put of %d bytes (at most %d) or a bad ID", req.BodySize, max)
		return nil
	}
	o := hex.EncodeToString(req.OutputID)
	fd, err := openDir(s.Own, o[:2], true)
	if err != nil {
		if req.BodySize > 0 {
			if err := skipBody(r); err != nil {
				return err
			}
		}
		res.Err = err.Error()
		return nil
	}
	defer unix.Close(fd)
	tmp := fmt.Sprintf(".%s-d.%d.%d", o, os.Getpid(), time.Now().UnixNano())
	tfd, err := unix.Openat(fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o666)
	if err != nil {
		if req.BodySize > 0 {
			if err := skipBody(r); err != nil {
				return err
			}
		}
		res.Err = err.Error()
		return nil
	}
	f := os.NewFile(uintptr(tfd), tmp)
	var n int64
	if req.BodySize > 0 {
		n, err = readBody(r, f, req.BodySize)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil || n != req.BodySize {
		unix.Unlinkat(fd, tmp, 0)
		if err == nil {
			err = fmt.Errorf("body of %d bytes, not %d", n, req.BodySize)
		}
		return fmt.Errorf("put: %v", err)
	}
	if err := unix.Renameat(fd, tmp, fd, o+"-d"); err != nil {
		unix.Unlinkat(fd, tmp, 0)
		res.Err = err.Error()
		return nil
	}
	x := hex.EncodeToString(req.ActionID)
	now := time.Now()
	line := fmt.Sprintf("v1 %x %x %20d %20d\n", req.ActionID, req.OutputID, req.BodySize, now.UnixNano())
	if err := writeAt(s.Own, x[:2], x+"-a", []byte(line)); err != nil {
		res.Err = err.Error()
		return nil
	}
	res.OutputID, res.Size, res.Time, res.DiskPath = req.OutputID, req.BodySize, &now, filepath.Join(s.Own, o[:2], o+"-d")
	return nil
}

// readBody decodes the body, `"<base64>"`, of size bytes into w.
func readBody(r *bufio.Reader, w io.Writer, size int64) (int64, error) {
	if err := skipTo(r, '"'); err != nil {
		return 0, err
	}
	enc := int64(base64.StdEncoding.EncodedLen(int(size)))
	n, err := io.Copy(w, base64.NewDecoder(base64.StdEncoding, io.LimitReader(r, enc)))
	if err != nil {
		return n, err
	}
	if c, err := r.ReadByte(); err != nil || c != '"' {
		return n, errors.New("body not closed")
	}
	return n, nil
}

// skipBody reads past a body it refuses, without keeping it.
func skipBody(r *bufio.Reader) error {
	if err := skipTo(r, '"'); err != nil {
		return err
	}
	for {
		_, err := r.ReadSlice('"')
		if err == nil {
			return nil
		} else if err != bufio.ErrBufferFull {
			return err
		}
	}
}

// skipTo reads white space up to and including c.
func skipTo(r *bufio.Reader, c byte) error {
	for {
		b, err := r.ReadByte()
		if err != nil {
			return err
		}
		if b == c {
			return nil
		}
		if b != ' ' && b != '\n' && b != '\r' && b != '\t' {
			return fmt.Errorf("expected %q, found %q", c, b)
		}
	}
}

// writeAt writes dir/sub/name (replacing it at once).
func writeAt(dir, sub, name string, data []byte) error {
	fd, err := openDir(dir, sub, true)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	tmp := fmt.Sprintf(".%s.%d.%d", name, os.Getpid(), time.Now().UnixNano())
	tfd, err := unix.Openat(fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o666)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(tfd), tmp)
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(fd, tmp, fd, name)
	}
	if err != nil {
		unix.Unlinkat(fd, tmp, 0)
	}
	return err
}
