package queue

import "context"

// run is the consuming loop.
func (c *core) run(ctx context.Context) {
	<-ctx.Done()
	c.mu.Lock()
	if c.items != nil {
		close(c.items)
	}
	c.mu.Unlock()
}

// remove deletes every item with id.
func (c *core) remove(ctx context.Context, id string) (int, error) {
	return 0, nil
}
