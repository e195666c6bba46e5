package transport

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"

	"github.com/go-zookeeper/zk"
)

// fakeServer plays a server's side of a connect handshake on conn: it reads
// the connect request, answers with session (0: expired), then answers
// each auth packet with codes[i] and records the packets.
func fakeServer(t *testing.T, conn net.Conn, session uint64, codes []int32) <-chan [][]byte {
	t.Helper()
	got := make(chan [][]byte, 1)
	go func() {
		defer conn.Close()
		var pkts [][]byte
		defer func() { got <- pkts }()
		if _, err := readFrame(conn); err != nil { // the connect request
			return
		}
		resp := binary.BigEndian.AppendUint32(nil, 0)    // protocolVersion
		resp = binary.BigEndian.AppendUint32(resp, 4000) // timeOut
		resp = binary.BigEndian.AppendUint64(resp, session)
		resp = binary.BigEndian.AppendUint32(resp, 16) // passwd
		resp = append(resp, make([]byte, 16)...)
		if _, err := conn.Write(binary.BigEndian.AppendUint32(nil, uint32(len(resp)))); err != nil {
			return
		}
		conn.Write(resp)
		for _, code := range codes {
			pkt, err := readFrame(conn)
			if err != nil {
				return
			}
			pkts = append(pkts, pkt)
			reply := binary.BigEndian.AppendUint32(nil, uint32(authXidWire))
			reply = binary.BigEndian.AppendUint64(reply, 0)
			reply = binary.BigEndian.AppendUint32(reply, uint32(code))
			conn.Write(binary.BigEndian.AppendUint32(nil, uint32(len(reply))))
			conn.Write(reply)
		}
	}()
	return got
}

func readFrame(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(n[:]))
	_, err := io.ReadFull(r, b)
	return b, err
}

// handshake writes a connect request through a and reads the connect
// response, as go-zookeeper does.
func handshake(a net.Conn) ([]byte, error) {
	if _, err := a.Write([]byte{0, 0, 0, 4, 1, 2, 3, 4}); err != nil {
		return nil, err
	}
	var n [4]byte
	if _, err := io.ReadFull(a, n[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(n[:]))
	_, err := io.ReadFull(a, b)
	return b, err
}

func TestAuthConn_SendsCredentialsBeforeTheHandshakeIsRead(t *testing.T) {
	client, server := net.Pipe()
	got := fakeServer(t, server, 0x1234, []int32{0, 0})
	var failed error
	a := Authenticate(client, []Credential{{Scheme: "digest", Data: []byte("u:p")}, {Scheme: "ip", Data: nil}}, false,
		func(err error) { failed = err })
	resp, err := handshake(a)
	client.Close()
	if err != nil || failed != nil {
		t.Fatalf("handshake: %v, fail: %v", err, failed)
	}
	if sid := binary.BigEndian.Uint64(resp[8:16]); sid != 0x1234 {
		t.Errorf("go-zookeeper would read session 0x%x; want the server's connect response unchanged", sid)
	}
	pkts := <-got
	if len(pkts) != 2 {
		t.Fatalf("the server got %d auth packets; want 2", len(pkts))
	}
	want := []byte{0xff, 0xff, 0xff, 0xfc, 0, 0, 0, 100, 0, 0, 0, 0, 0, 0, 0, 6, 'd', 'i', 'g', 'e', 's', 't', 0, 0, 0, 3, 'u', ':', 'p'}
	if !bytes.Equal(pkts[0], want) {
		t.Errorf("auth packet = %v; want %v (xid -4, setAuth, type 0, scheme, auth)", pkts[0], want)
	}
}

func TestAuthConn_RejectedCredentials(t *testing.T) {
	client, server := net.Pipe()
	got := fakeServer(t, server, 0x1234, []int32{-115})
	var failed error
	a := Authenticate(client, []Credential{{Scheme: "nope", Data: []byte("x")}}, false, func(err error) { failed = err })
	_, err := handshake(a)
	client.Close()
	<-got
	if !errors.Is(err, ErrAuthFailed) || !errors.Is(err, zk.ErrAuthFailed) || !errors.Is(failed, ErrAuthFailed) {
		t.Fatalf("handshake = %v, fail = %v; want ErrAuthFailed for both", err, failed)
	}
}

func TestAuthConn_ExpiredSessionGetsNoCredentials(t *testing.T) {
	client, server := net.Pipe()
	got := fakeServer(t, server, 0, nil)
	a := Authenticate(client, []Credential{{Scheme: "digest", Data: []byte("u:p")}}, false, nil)
	resp, err := handshake(a)
	client.Close()
	if err != nil || binary.BigEndian.Uint64(resp[8:16]) != 0 {
		t.Fatalf("handshake = %v, %v; want the expired session's response", resp, err)
	}
	if pkts := <-got; len(pkts) != 0 {
		t.Errorf("the server got %d auth packets for an expired session; want none", len(pkts))
	}
}
