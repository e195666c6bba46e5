package integration

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// The relative links of README.md and docs/*.md must point to files and
// directories of the repository, and a link's #anchor to a heading of the
// page it names, as GitHub renders them (issue 32 §4). Links to other
// sites are not fetched.

var (
	mdLink     = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	mdCodeSpan = regexp.MustCompile("`[^`]*`")
	mdHeading  = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
)

// docAnchor returns the anchor GitHub gives a heading: lower case, spaces
// as hyphens, and nothing but letters, digits, '-' and '_' kept.
func docAnchor(heading string) string {
	heading = strings.ReplaceAll(heading, "`", "")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// docScan returns a Markdown page's heading anchors (repeats numbered as
// GitHub numbers them: x, x-1, x-2) and the targets of its inline links,
// with their lines, leaving out fenced code blocks and code spans.
func docScan(text []byte) (anchors map[string]bool, links map[string][]int) {
	anchors, links = map[string]bool{}, map[string][]int{}
	seen := map[string]int{}
	inFence := false
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		if m := mdHeading.FindStringSubmatch(l); m != nil {
			a := docAnchor(m[1])
			if k := seen[a]; k > 0 {
				anchors[fmt.Sprintf("%s-%d", a, k)] = true
			} else {
				anchors[a] = true
			}
			seen[a]++
		}
		for _, m := range mdLink.FindAllStringSubmatch(mdCodeSpan.ReplaceAllString(l, ""), -1) {
			links[m[1]] = append(links[m[1]], n)
		}
	}
	return anchors, links
}

// docLinkErrors checks the links of the pages (paths relative to root)
// and returns one line per broken link.
func docLinkErrors(root string, pages []string) []string {
	var bad []string
	anchorsOf := map[string]map[string]bool{}
	read := func(page string) (map[string]bool, map[string][]int, error) {
		text, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			return nil, nil, err
		}
		a, l := docScan(text)
		anchorsOf[page] = a
		return a, l, nil
	}
	type pageLinks struct {
		page  string
		links map[string][]int
	}
	var all []pageLinks
	for _, page := range pages {
		_, links, err := read(page)
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		all = append(all, pageLinks{page, links})
	}
	for _, pl := range all {
		for target, lines := range pl.links {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			where := fmt.Sprintf("%s:%d: link %q", pl.page, lines[0], target)
			file, anchor, _ := strings.Cut(target, "#")
			dest := pl.page
			if file != "" {
				dest = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(pl.page), file)))
				if dest == ".." || strings.HasPrefix(dest, "../") || filepath.IsAbs(file) {
					bad = append(bad, where+": outside the repository")
					continue
				}
				if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
					bad = append(bad, where+": no such file or directory")
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(dest, ".md") {
				bad = append(bad, where+": an anchor into a file that is not Markdown")
				continue
			}
			anchors, ok := anchorsOf[dest]
			if !ok {
				var err error
				if anchors, _, err = read(dest); err != nil {
					bad = append(bad, where+": "+err.Error())
					continue
				}
			}
			if !anchors[anchor] {
				bad = append(bad, where+": no heading #"+anchor+" in "+dest)
			}
		}
	}
	return bad
}

// TestDocs_RelativeLinksResolve checks every relative link of README.md
// and docs/*.md.
func TestDocs_RelativeLinksResolve(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	pages := docPages(t, root)
	if len(pages) < 2 {
		t.Fatalf("found the pages %v: docs/ is missing", pages)
	}
	links := 0
	for _, p := range pages {
		text, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		_, l := docScan(text)
		links += len(l)
	}
	if links < 10 {
		t.Fatalf("found %d links in %v: the scan is broken", links, pages)
	}
	for _, e := range docLinkErrors(root, pages) {
		t.Error(e)
	}
}

// TestDocs_LinkCheckCatchesBrokenLinks shows the check failing on a
// missing file, a missing anchor and a path out of the repository, and
// passing on GitHub's anchors for headings with code, arrows and repeats.
func TestDocs_LinkCheckCatchesBrokenLinks(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# Top\n\n## Curator → go-curator\n\n## `cache`: a view\n\n## Top\n\n"+
		"[a](docs/a.md) [b](docs/a.md#the-lock) [c](#curator--go-curator) [d](#cache-a-view) [e](#top-1) [f](docs) [g](https://example.com/x#y)\n"+
		"`[not a link](nowhere.md)`\n```text\n[nor this](nowhere.md)\n```\n")
	write("docs/a.md", "# The lock\n\n[back](../README.md#top) [up](../README.md)\n")
	if got := docLinkErrors(root, []string{"README.md", "docs/a.md"}); len(got) != 0 {
		t.Fatalf("good links reported: %q", got)
	}
	write("docs/b.md", "[1](missing.md) [2](a.md#no-such) [3](#nowhere) [4](../../etc/passwd) [5](../go.mod#x)\n")
	write("go.mod", "module x\n")
	got := strings.Join(docLinkErrors(root, []string{"docs/b.md"}), "\n")
	for _, want := range []string{
		`docs/b.md:1: link "missing.md": no such file or directory`,
		`docs/b.md:1: link "a.md#no-such": no heading #no-such in docs/a.md`,
		`docs/b.md:1: link "#nowhere": no heading #nowhere in docs/b.md`,
		`docs/b.md:1: link "../../etc/passwd": outside the repository`,
		`docs/b.md:1: link "../go.mod#x": an anchor into a file that is not Markdown`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("errors lack %q; got:\n%s", want, got)
		}
	}
}
