package lockcore

// Policy reports whether the contender at index i of the sorted children
// holds the lock and, if not, which one sibling to watch.
type Policy func(children []string, i int) (held bool, watch string)

// MaxLeases is Curator's standard driver: the first n contenders hold the
// lock, and every other one watches the contender n places ahead of it.
// A mutex is MaxLeases(1): each waiter watches its immediate predecessor.
func MaxLeases(n int) Policy {
	return func(children []string, i int) (bool, string) {
		if i < n {
			return true, ""
		}
		return false, children[i-n]
	}
}
