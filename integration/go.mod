module github.com/go-curator/curator/integration

go 1.26.0

replace github.com/go-curator/curator => ../

replace github.com/go-curator/curator/zktest => ../zktest

require (
	github.com/anishathalye/porcupine v1.3.1
	github.com/go-curator/curator v0.1.0
	github.com/go-curator/curator/zktest v0.1.0
	github.com/go-zookeeper/zk v1.0.4
	github.com/google/uuid v1.6.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
)
