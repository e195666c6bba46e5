package framework

// obsOptions holds the Builder's observability settings: the metrics hook.
type obsOptions struct{}

// check reports a bad observability setting when Build runs.
func (o *obsOptions) check() error { return nil }
