// Command modproxy lays out the repository's modules, at one version, as a
// Go module proxy serves them (see "go help goproxy"), in a directory that
// GOPROXY=file://DIR can point at:
//
//	DIR/<module>/@v/list
//	DIR/<module>/@v/<version>.info
//	DIR/<module>/@v/<version>.mod
//	DIR/<module>/@v/<version>.zip
//
// Each zip holds what the public proxy would serve for a tag of the current
// commit: the files git tracks in the module's directory, as they are in the
// work tree, less nested modules, plus the repository's LICENSE when the
// module has none (as cmd/go does for a module in a subdirectory). A go.sum
// line computed from it is the line the published version will have, if the
// tagged commit has the same files.
//
// Usage, from anywhere in the repository:
//
//	modproxy -o DIR -version v0.1.0 [-time RFC3339] moduledir...
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

func main() {
	out := flag.String("o", "", "the proxy directory to write")
	version := flag.String("version", "", "the version of every module, such as v0.1.0")
	stamp := flag.String("time", "", "the versions' time, RFC 3339 (default: the HEAD commit's)")
	flag.Parse()
	if err := run(*out, *version, *stamp, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
}

func run(out, version, stamp string, dirs []string) error {
	if out == "" || len(dirs) == 0 {
		return errors.New("usage: modproxy -o DIR -version vX.Y.Z moduledir...")
	}
	if !semver.IsValid(version) || semver.Canonical(version) != version {
		return fmt.Errorf("version %q is not a canonical semantic version such as v0.1.0", version)
	}
	root, err := git("", "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	root = strings.TrimSpace(root)
	when, err := versionTime(root, stamp)
	if err != nil {
		return err
	}
	license, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		return err
	}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return fmt.Errorf("%s is not in the repository %s", d, root)
		}
		if err := publish(out, root, filepath.ToSlash(rel), version, when, license); err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
	}
	return nil
}

// versionTime returns stamp, or the HEAD commit's time.
func versionTime(root, stamp string) (time.Time, error) {
	if stamp == "" {
		s, err := git(root, "log", "-1", "--format=%cI", "HEAD")
		if err != nil {
			return time.Time{}, err
		}
		stamp = strings.TrimSpace(s)
	}
	t, err := time.Parse(time.RFC3339, stamp)
	if err != nil {
		return time.Time{}, fmt.Errorf("time: %w", err)
	}
	return t.UTC(), nil
}

// publish writes the module in root/rel at version into the proxy out.
func publish(out, root, rel, version string, when time.Time, license []byte) error {
	gomod, err := os.ReadFile(filepath.Join(root, rel, "go.mod"))
	if err != nil {
		return err
	}
	mf, err := modfile.ParseLax("go.mod", gomod, nil)
	if err != nil {
		return err
	}
	if mf.Module == nil {
		return errors.New("go.mod has no module line")
	}
	m := module.Version{Path: mf.Module.Mod.Path, Version: version}
	files, err := tracked(root, rel, license)
	if err != nil {
		return err
	}
	esc, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	dir := filepath.Join(out, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var zipped bytes.Buffer
	if err := modzip.Create(&zipped, m, files); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, when})
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		version + ".zip":  zipped.Bytes(),
		version + ".mod":  gomod,
		version + ".info": info,
		"list":            []byte(version + "\n"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// tracked returns the files git tracks under root/rel, with their work-tree
// content, plus license as LICENSE when rel is a subdirectory without one.
// modzip.Create leaves out the files of nested modules.
func tracked(root, rel string, license []byte) ([]modzip.File, error) {
	args := []string{"ls-files", "-z", "--"}
	if rel != "." {
		args = append(args, rel)
	}
	list, err := git(root, args...)
	if err != nil {
		return nil, err
	}
	prefix := ""
	if rel != "." {
		prefix = rel + "/"
	}
	var files []modzip.File
	haveLicense := false
	for _, p := range strings.Split(list, "\x00") {
		name, ok := strings.CutPrefix(p, prefix)
		if p == "" || !ok {
			continue
		}
		full := filepath.Join(root, filepath.FromSlash(p))
		if _, err := os.Lstat(full); errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the work tree
		}
		files = append(files, diskFile{name: name, full: full})
		if name == "LICENSE" {
			haveLicense = true
		}
	}
	if !haveLicense && rel != "." {
		files = append(files, dataFile{name: "LICENSE", data: license})
	}
	return files, nil
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return string(out), nil
}

// diskFile is a file of the work tree.
type diskFile struct{ name, full string }

func (f diskFile) Path() string                 { return f.name }
func (f diskFile) Lstat() (fs.FileInfo, error)  { return os.Lstat(f.full) }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.full) }

// dataFile is a file held in memory.
type dataFile struct {
	name string
	data []byte
}

func (f dataFile) Path() string                 { return f.name }
func (f dataFile) Lstat() (fs.FileInfo, error)  { return dataInfo(f), nil }
func (f dataFile) Open() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(f.data)), nil }

type dataInfo dataFile

func (i dataInfo) Name() string       { return path.Base(i.name) }
func (i dataInfo) Size() int64        { return int64(len(i.data)) }
func (i dataInfo) Mode() fs.FileMode  { return 0o644 }
func (i dataInfo) ModTime() time.Time { return time.Time{} }
func (i dataInfo) IsDir() bool        { return false }
func (i dataInfo) Sys() any           { return nil }
