package queue

import (
	"bytes"
	"testing"
)

func TestCodec_CuratorBytes(t *testing.T) {
	// Curator's ItemSerializer for the two items "ab" and "": version
	// 0x00010001, 0x01 len "ab", 0x01 len 0, 0x02.
	want := []byte{0, 1, 0, 1, 1, 0, 0, 0, 2, 'a', 'b', 1, 0, 0, 0, 0, 2}
	got := encode([][]byte{[]byte("ab"), {}})
	if !bytes.Equal(got, want) {
		t.Fatalf("encode = %v; want %v", got, want)
	}
	items, err := decode(want)
	if err != nil || len(items) != 2 || string(items[0]) != "ab" || len(items[1]) != 0 {
		t.Fatalf("decode = %q, %v", items, err)
	}
}

func TestCodec_RejectsBadBytes(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":          nil,
		"short":          {0, 1, 0},
		"version":        {0, 1, 0, 2, 2},
		"no end":         {0, 1, 0, 1},
		"opcode":         {0, 1, 0, 1, 7},
		"short length":   {0, 1, 0, 1, 1, 0, 0},
		"length":         {0, 1, 0, 1, 1, 0, 0, 0, 9, 'a', 2},
		"negative":       {0, 1, 0, 1, 1, 0xff, 0xff, 0xff, 0xff, 2},
		"no end after":   {0, 1, 0, 1, 1, 0, 0, 0, 1, 'a'},
		"text, not ours": []byte("hello world"),
	} {
		if items, err := decode(b); err == nil {
			t.Errorf("%s: decode(%v) = %q, nil; want an error", name, b, items)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(encode([][]byte{[]byte("x")}))
	f.Add([]byte{0, 1, 0, 1, 1, 0x7f, 0xff, 0xff, 0xff, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		items, err := decode(b)
		if err != nil {
			return
		}
		again, err := decode(encode(items))
		if err != nil || len(again) != len(items) {
			t.Fatalf("round trip: %q, %v", again, err)
		}
	})
}

func TestNames_Curator(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{priorityString(5), "100000005"},
		{priorityString(0), "100000000"},
		{priorityString(-1), "0FFFFFFFF"},
		{priorityString(-2147483648), "080000000"},
		{epochString(0x18C3A2B1C00), "|18C3A2B1C00|"},
		{epochString(255), "|000000FF|"},
		{fixID("a/b|c"), "a_b_c"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q; want %q", tt.got, tt.want)
		}
	}
}

func TestNames_ParseAndSort(t *testing.T) {
	tests := []struct {
		kind kind
		in   []string
		want []string
	}{
		{plainKind, []string{"queue-0000000003", "queue-0000000001", "lock", "queue-0000000002"},
			[]string{"queue-0000000001", "queue-0000000002", "queue-0000000003"}},
		{priorityKind, []string{"queue-1000000050000000001", "queue-0FFFFFFFF0000000002", "queue-1000000000000000003"},
			[]string{"queue-0FFFFFFFF0000000002", "queue-1000000000000000003", "queue-1000000050000000001"}},
		{delayKind, []string{"queue-|000000FF|0000000001", "queue-|0000000A|0000000002"},
			[]string{"queue-|0000000A|0000000002", "queue-|000000FF|0000000001"}},
		{idKind, []string{"queue-|b|0000000002", "queue-|a|0000000003", "queue-|c|0000000001"},
			[]string{"queue-|c|0000000001", "queue-|b|0000000002", "queue-|a|0000000003"}},
	}
	for _, tt := range tests {
		t.Run(tt.kind.String(), func(t *testing.T) {
			l, _ := newListing(tt.kind, tt.in, nil)
			var got []string
			for _, e := range l.entries {
				got = append(got, l.nameOf(e))
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %q; want %q", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %q; want %q", got, tt.want)
				}
			}
		})
	}
}
