package queue

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The node names, as Curator 5.4 writes them (the server appends a
// 10-digit sequence number to each):
//
//	Queue          queue-<seq>
//	PriorityQueue  queue-<1|0><priority as 8 hex digits><seq>   (0 for negative)
//	DelayQueue     queue-|<epoch ms as hex, at least 8 digits>|<seq>
//	IDQueue        queue-|<id, '/' and '|' made '_'>|<seq>
const (
	itemPrefix = "queue-"
	separator  = "|"
	seqDigits  = 10
)

// kind is one of Curator's queue kinds.
type kind int

const (
	plainKind kind = iota
	idKind
	priorityKind
	delayKind
)

func (k kind) String() string {
	return [...]string{"Queue", "IDQueue", "PriorityQueue", "DelayQueue"}[k]
}

// priorityString is Curator's priorityToString: "1" for a priority >= 0,
// "0" for a negative one, then its 32 bits as 8 upper-case hex digits, so
// names sort by priority.
func priorityString(p int32) string {
	sign := "1"
	if p < 0 {
		sign = "0"
	}
	return fmt.Sprintf("%s%08X", sign, uint32(p))
}

// epochString is Curator's epochToString.
func epochString(ms int64) string { return fmt.Sprintf("%s%08X%s", separator, ms, separator) }

// fixID is Curator's fixId.
func fixID(id string) string {
	return strings.NewReplacer("/", "_", separator, "_").Replace(id)
}

// entry is one pending item node, kept compactly: its kind's sort key
// (priority, due time in ms), its sequence number and, for a name that its
// kind cannot rebuild from those (an id, a foreign name), 1 + the index
// of the name in the listing's odd names.
type entry struct {
	key int64
	seq int64
	odd int32
}

func compareEntries(a, b entry) int {
	if c := cmp.Compare(a.key, b.key); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

// seqOf parses the last 10 characters of name as the sequence number.
func seqOf(name string) (int64, bool) {
	if len(name) < seqDigits {
		return 0, false
	}
	n, err := strconv.ParseInt(name[len(name)-seqDigits:], 10, 64)
	return n, err == nil
}

// parse returns the entry of a child name of the queue directory, and
// whether it is an item at all (Curator skips, with a warning, names that
// do not start with "queue-"). canonical reports whether name(e) rebuilds
// the name.
func (k kind) parse(name string) (e entry, canonical, ok bool) {
	if !strings.HasPrefix(name, itemPrefix) {
		return entry{}, false, false
	}
	seq, sok := seqOf(name)
	rest := name[len(itemPrefix):]
	if sok {
		rest = rest[:len(rest)-seqDigits]
	}
	e.seq = seq
	switch k {
	case plainKind:
		return e, sok && rest == "", true
	case priorityKind:
		e.key = math.MinInt64 // Curator's requeued "queue-<seq>" sorts first
		if sok && len(rest) == 9 && (rest[0] == '0' || rest[0] == '1') {
			if v, err := strconv.ParseUint(rest[1:], 16, 32); err == nil {
				e.key = int64(int32(uint32(v)))
				return e, rest == priorityString(int32(e.key)), true
			}
		}
		return e, false, true
	case delayKind:
		e.key = delayEpoch(name) // 0 (due) when it does not parse, as in Curator
		return e, sok && epochString(e.key) == rest, true
	default: // idKind: names keep their id
		return e, false, true
	}
}

// delayEpoch is Curator's getEpoch: the hex number between the last two
// separators, or 0.
func delayEpoch(name string) int64 {
	i2 := strings.LastIndex(name, separator)
	if i2 <= 0 {
		return 0
	}
	i1 := strings.LastIndex(name[:i2], separator)
	if i1 <= 0 || i2 <= i1+1 {
		return 0
	}
	v, err := strconv.ParseInt(name[i1+1:i2], 16, 64)
	if err != nil {
		return 0
	}
	return v
}

// idOf is Curator's parseId: the id between the first two separators.
func idOf(name string) (string, bool) {
	i := strings.Index(name, separator)
	if i < 0 {
		return "", false
	}
	j := strings.Index(name[i+1:], separator)
	if j < 0 {
		return "", false
	}
	return name[i+1 : i+1+j], true
}

// name rebuilds the name of a canonical entry.
func (k kind) name(e entry) string {
	switch k {
	case priorityKind:
		return fmt.Sprintf("%s%s%010d", itemPrefix, priorityString(int32(e.key)), e.seq)
	case delayKind:
		return fmt.Sprintf("%s%s%010d", itemPrefix, epochString(e.key), e.seq)
	default:
		return fmt.Sprintf("%s%010d", itemPrefix, e.seq)
	}
}

// listing is a sorted snapshot of the queue directory's items.
type listing struct {
	kind    kind
	entries []entry
	odd     []string
}

// newListing parses and sorts the children of the queue directory,
// skipping those skip reports (bad items this consumer already reported)
// and foreign names.
func newListing(k kind, children []string, skip func(string) bool) (*listing, int) {
	l := &listing{kind: k, entries: make([]entry, 0, len(children))}
	foreign := 0
	for _, c := range children {
		e, canonical, ok := k.parse(c)
		if !ok {
			foreign++
			continue
		}
		if skip != nil && skip(c) {
			continue
		}
		if !canonical {
			l.odd = append(l.odd, c)
			e.odd = int32(len(l.odd))
		}
		l.entries = append(l.entries, e)
	}
	slices.SortFunc(l.entries, compareEntries)
	return l, foreign
}

// nameOf returns the node name of e.
func (l *listing) nameOf(e entry) string {
	if e.odd > 0 {
		return l.odd[e.odd-1]
	}
	return l.kind.name(e)
}
