package framework

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
)

// ErrBadCompressedData reports node data that the compression provider
// could not decompress: data written uncompressed, or by another
// provider, read with Decompressed or under EnableCompression.
var ErrBadCompressedData = errors.New("framework: node data is not valid compressed data")

// CompressionProvider compresses node data on its way to the server and
// decompresses it on its way back: Curator's CompressionProvider.
// Implementations must be safe for concurrent use. Decompress should
// report bad input as an error, never panic.
//
// The path given to both is the operation's path as the caller gave it,
// without the namespace.
type CompressionProvider interface {
	Compress(path string, data []byte) ([]byte, error)
	Decompress(path string, data []byte) ([]byte, error)
}

// GzipCompression is the gzip provider (RFC 1952), Curator's default
// (GzipCompressionProvider): what Java's GZIPOutputStream writes, Go
// reads, and the reverse. Its zero value is ready to use.
type GzipCompression struct{}

// Compress returns data as one gzip member with no name and no
// modification time, marked as written on an unknown system as Java's
// GZIPOutputStream marks it (OS byte 0).
func (GzipCompression) Compress(_ string, data []byte) ([]byte, error) {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.OS = 0
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Decompress returns the data of the gzip members in data. Empty data
// (a node written with none) decompresses to empty data. Anything else
// that is not gzip, or whose checksum or length does not match, returns
// an error matching ErrBadCompressedData.
func (GzipCompression) Decompress(_ string, data []byte) ([]byte, error) {
	if len(data) == 0 {
		return []byte{}, nil
	}
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCompressedData, err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCompressedData, err)
	}
	return out, nil
}

// provider returns the client's compression provider, gzip by default.
func (c *Client) provider() CompressionProvider {
	if c.compression == nil {
		return GzipCompression{}
	}
	return c.compression
}

// compress compresses data for path when on, or when the client
// compresses all data.
func (c *Client) compress(on bool, path string, data []byte) ([]byte, error) {
	if !on && !c.compressAll {
		return data, nil
	}
	out, err := c.provider().Compress(path, data)
	if err != nil {
		return nil, fmt.Errorf("compress: %w", err)
	}
	return out, nil
}

// decompress decompresses data read from path when on. A provider's
// error that does not say ErrBadCompressedData is made to.
func (c *Client) decompress(on bool, path string, data []byte) ([]byte, error) {
	if !on && !c.compressAll {
		return data, nil
	}
	out, err := c.provider().Decompress(path, data)
	if err != nil {
		if !errors.Is(err, ErrBadCompressedData) {
			err = fmt.Errorf("%w: %w", ErrBadCompressedData, err)
		}
		return nil, fmt.Errorf("decompress: %w", err)
	}
	return out, nil
}
