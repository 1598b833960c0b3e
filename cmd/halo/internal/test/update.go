package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// updateFile writes the observed outputs into a case file's expect.output: outputs maps a
// case's Index (0 for a file of one case) to its output. The file keeps its keys in order
// and is written with two-space indentation, through a temporary file renamed over it; it is
// not touched when nothing changes. It reports whether it wrote.
func updateFile(dir, path string, outputs map[int]any) (bool, error) {
	full := abs(dir, path)
	if st, err := os.Lstat(full); err != nil {
		return false, err
	} else if !st.Mode().IsRegular() {
		// Renaming over a symbolic link would replace the link, and writing through it would
		// change a file elsewhere: neither is what --update is for.
		return false, fmt.Errorf("%s is not a regular file (a symbolic link?); --update writes only regular files", path)
	}
	data, err := readLimited(full)
	if err != nil {
		return false, err
	}
	trimmed := bytes.TrimSpace(data)
	list := len(trimmed) > 0 && trimmed[0] == '['
	var raws []json.RawMessage
	if list {
		if err := strictUnmarshal(trimmed, &raws); err != nil {
			return false, err
		}
	} else {
		raws = []json.RawMessage{trimmed}
	}
	for i := range raws {
		index := 0
		if list {
			index = i + 1
		}
		out, ok := outputs[index]
		if !ok {
			continue
		}
		c, err := decodeObject(raws[i])
		if err != nil {
			return false, err
		}
		expect := object{}
		if v, ok := c.get("expect"); ok {
			if expect, err = decodeObject(v); err != nil {
				return false, err
			}
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			return false, err
		}
		expect = expect.set("output", bytes.TrimSpace(buf.Bytes()))
		ev, _ := expect.MarshalJSON()
		c = c.set("expect", ev)
		raws[i], _ = c.MarshalJSON()
	}
	var compact []byte
	if list {
		var b bytes.Buffer
		b.WriteByte('[')
		for i, r := range raws {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(r)
		}
		b.WriteByte(']')
		compact = b.Bytes()
	} else {
		compact = raws[0]
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, compact, "", "  "); err != nil {
		return false, err
	}
	pretty.WriteByte('\n')
	if bytes.Equal(pretty.Bytes(), data) {
		return false, nil
	}
	return true, writeFile(full, pretty.Bytes())
}

// writeFile replaces path's content with data through a temporary file in its folder, so a
// reader never sees half of it; the file keeps its mode.
func writeFile(path string, data []byte) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(st.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	return nil
}
