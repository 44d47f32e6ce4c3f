package config

import (
	"bytes"
	"strings"
	"testing"
)

// TestEditKeys: each case edits a file and states the exact result, so a
// comment lost, a line moved or a value half-replaced shows as a diff.
func TestEditKeys(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		edits []KeyEdit
		want  string
	}{
		{
			name:  "replace in place, comments kept",
			in:    "# mine\n[model]\n# which API\nprovider = \"openai\" # was openai\nname = \"x\"\n",
			edits: []KeyEdit{{"model", "provider", `"deepseek"`}},
			want:  "# mine\n[model]\n# which API\nprovider = \"deepseek\" # was openai\nname = \"x\"\n",
		},
		{
			name:  "a # inside a quoted value is not a comment",
			in:    "[model]\nname = \"a#b\" # note\nbase_url = 'lit#eral'\n",
			edits: []KeyEdit{{"model", "name", `"c"`}, {"model", "base_url", `"http://h/v1"`}},
			want:  "[model]\nname = \"c\" # note\nbase_url = \"http://h/v1\"\n",
		},
		{
			name:  "escaped quote in a basic string",
			in:    "[model]\nname = \"a\\\"# b\" # c\n",
			edits: []KeyEdit{{"model", "name", `"n"`}},
			want:  "[model]\nname = \"n\" # c\n",
		},
		{
			name:  "missing key goes after the table's last key",
			in:    "[model]\nprovider = \"openai\"\n\n# about permissions\n[permissions]\nmode = \"safe\"\n",
			edits: []KeyEdit{{"model", "api_key_secret", `"model-openai"`}},
			want:  "[model]\nprovider = \"openai\"\napi_key_secret = \"model-openai\"\n\n# about permissions\n[permissions]\nmode = \"safe\"\n",
		},
		{
			name:  "missing key in a table with no keys goes after the header",
			in:    "[permissions] # empty\n\n[model]\nname = \"x\"\n",
			edits: []KeyEdit{{"permissions", "mode", `"yolo"`}},
			want:  "[permissions] # empty\nmode = \"yolo\"\n\n[model]\nname = \"x\"\n",
		},
		{
			name:  "missing table is added at the end",
			in:    "owner = \"me\"",
			edits: []KeyEdit{{"permissions", "mode", `"safe"`}},
			want:  "owner = \"me\"\n\n[permissions]\nmode = \"safe\"\n",
		},
		{
			name:  "CRLF stays CRLF",
			in:    "[model]\r\nname = \"x\"\r\n# end\r\n",
			edits: []KeyEdit{{"model", "name", `"y"`}, {"model", "provider", `"qwen"`}},
			want:  "[model]\r\nname = \"y\"\r\nprovider = \"qwen\"\r\n# end\r\n",
		},
		{
			name:  "multi-line array of inline tables replaced whole",
			in:    "[workspace]\nroots = [\n  { name = \"main\", path = \"/a]b\" }, # first\n  # a comment inside\n  { name = \"two\", path = '/c' },\n] # after\nmax_file_bytes = 10\n",
			edits: []KeyEdit{{"workspace", "roots", RootsValue([]Root{{Name: "main", Path: "/ws"}, {Name: "home", Path: "/h", Access: AccessReadOnly}})}},
			want:  "[workspace]\nroots = [\n  { name = \"main\", path = \"/ws\", access = \"rw\" },\n  { name = \"home\", path = \"/h\", access = \"ro\" },\n] # after\nmax_file_bytes = 10\n",
		},
		{
			name:  "inline table value and quoted key",
			in:    "[model]\n\"name\" = \"x\"\nextra = { a = \"}\" }\n",
			edits: []KeyEdit{{"model", "name", `"y"`}},
			want:  "[model]\n\"name\" = \"y\"\nextra = { a = \"}\" }\n",
		},
		{
			name:  "multi-line strings skipped, key in a sub-table untouched",
			in:    "[model]\nnote = \"\"\"\nname = \"fake\"\n\"\"\"\n[model.sub]\nname = \"other\"\n",
			edits: []KeyEdit{{"model", "name", `"real"`}},
			want:  "[model]\nnote = \"\"\"\nname = \"fake\"\n\"\"\"\nname = \"real\"\n[model.sub]\nname = \"other\"\n",
		},
		{
			name:  "the same key in another table is not touched",
			in:    "[gateway]\nmode = \"x\"\n[permissions]\nmode = \"safe\"\n[[rules]]\nid = \"a\"\n",
			edits: []KeyEdit{{"permissions", "mode", `"autopilot"`}},
			want:  "[gateway]\nmode = \"x\"\n[permissions]\nmode = \"autopilot\"\n[[rules]]\nid = \"a\"\n",
		},
		{
			name:  "no newline at the end",
			in:    "[model]\nname = \"x\"",
			edits: []KeyEdit{{"model", "provider", `"vllm"`}},
			want:  "[model]\nname = \"x\"\nprovider = \"vllm\"\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EditKeys([]byte(tt.in), tt.edits...)
			if err != nil {
				t.Fatalf("EditKeys(%q, %v): %v", tt.in, tt.edits, err)
			}
			if string(got) != tt.want {
				t.Errorf("EditKeys(%q, %v) =\n%q\nwant\n%q", tt.in, tt.edits, got, tt.want)
			}
		})
	}
}

// TestEditKeysRefuses: what the editor cannot do safely is an error, and
// the input is never half-changed.
func TestEditKeysRefuses(t *testing.T) {
	tests := []struct {
		name, in string
		edit     KeyEdit
		want     string
	}{
		{"invalid TOML", "[model\nname = 1\n", KeyEdit{"model", "name", `"x"`}, "not valid TOML"},
		{"bad new value", "[model]\n", KeyEdit{"model", "name", `"unclosed`}, "is not a TOML value"},
		{"table as dotted keys", "model.name = \"x\"\n", KeyEdit{"model", "name", `"y"`}, "make the change by hand"},
		{"table as inline table", "model = { name = \"x\" }\n", KeyEdit{"model", "name", `"y"`}, "make the change by hand"},
		{"array table", "[[rules]]\nid = \"a\"\n", KeyEdit{"rules", "id", `"b"`}, "array of tables"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EditKeys([]byte(tt.in), tt.edit)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("EditKeys(%q, %v) = %q, %v; want an error containing %q", tt.in, tt.edit, got, err, tt.want)
			}
		})
	}
}

// TestEditKeysOnRenderedConfig edits the file Render writes and Load reads
// the result: every comment line of the original is still there.
func TestEditKeysOnRenderedConfig(t *testing.T) {
	data, err := Render(Default(testPaths(t)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := EditKeys(data,
		KeyEdit{"model", "provider", `"ollama"`}, KeyEdit{"model", "base_url", `"http://127.0.0.1:11434/v1"`},
		KeyEdit{"model", "name", `"qwen3:8b"`}, KeyEdit{"model", "api_key_env", `""`},
		KeyEdit{"permissions", "mode", `"safe"`},
		KeyEdit{"workspace", "roots", RootsValue([]Root{{Name: "main", Path: "/ws/a"}, {Name: "b", Path: "/ws/b"}})})
	if err != nil {
		t.Fatalf("EditKeys(rendered config): %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") && !bytes.Contains(got, []byte(line)) {
			t.Errorf("the edit lost the comment line %q", line)
		}
	}
	c, err := Load(writeConfig(t, string(got)))
	if err != nil {
		t.Fatalf("Load(edited): %v\n%s", err, got)
	}
	if c.Model.Provider != "ollama" || c.Model.Name != "qwen3:8b" || c.Permissions.Mode != "safe" || len(c.Workspace.Roots) != 2 {
		t.Errorf("edited config loads as model %+v, mode %q, roots %v", c.Model, c.Permissions.Mode, c.Workspace.Roots)
	}
}

// FuzzEditKeys: on any input, EditKeys either refuses or returns a file
// that keeps every comment line and in which only the edited key changed
// (EditKeys checks the latter itself; the fuzzer hunts for panics and for
// inputs where that check and the scanner disagree).
func FuzzEditKeys(f *testing.F) {
	f.Add("[model]\nname = \"x\" # c\n", "model", "name", `"y"`)
	f.Add("# top\r\n[model]\r\nroots = [\r\n 1, # x\r\n 2]\r\n", "model", "roots", `[3]`)
	f.Add("a = '''\n[model]\nname = 1\n'''\n", "model", "name", `"q"`)
	f.Add("[permissions]\nmode = \"\"\"a\"\"\"\"\"\n", "permissions", "mode", `"safe"`)
	f.Add("[ \"model\" . sub ]\nk = { x = [1, \"]\"] }\n", "model.sub", "k", `2`)
	f.Fuzz(func(t *testing.T, in, table, key, value string) {
		if !isPlainKey(key) {
			return
		}
		got, err := EditKeys([]byte(in), KeyEdit{table, key, value})
		if err != nil {
			return
		}
		// Comments inside the replaced value go with it.
		old := ""
		if doc, err := scan([]byte(in)); err == nil {
			for _, kv := range doc.keys {
				if kv.table == table && kv.key == key {
					old = in[kv.start:kv.end]
				}
			}
		}
		for _, line := range strings.Split(in, "\n") {
			if strings.HasPrefix(line, "#") && !strings.Contains(old, line) && !strings.Contains(string(got), line) {
				t.Errorf("EditKeys(%q, %s.%s = %s) lost the comment line %q:\n%q", in, table, key, value, line, got)
			}
		}
	})
}

// isPlainKey reports whether k is a bare TOML key, the only kind of key
// EditKeys is given.
func isPlainKey(k string) bool {
	if k == "" {
		return false
	}
	for i := range len(k) {
		if !isBareKeyByte(k[i]) {
			return false
		}
	}
	return true
}
