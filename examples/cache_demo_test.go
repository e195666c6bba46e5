package examples_test

// The cache demo's entry in demos, kept beside it.
func init() {
	demos = append(demos, demoCase{"cache", nil, []string{
		`^  watcher 3: loaded 6 nodes of /demo/cache/config$`,
		`^  watcher 1: NODE_UPDATED /demo/cache/config/db/pool = 20 \(version 1\)$`,
		`^  watcher 2: RESYNCED after a session change`,
		`^  watcher 2: NODE_UPDATED /demo/cache/config/db/url = postgres://db2/shop \(version 1\)$`,
		`^watcher 2 printed each of the 5 changes once and 1 resync line\(s\)`,
	}})
}
