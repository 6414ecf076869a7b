package docgen

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/invalid"
)

// sizedTemplate has members that join and leave by the event's size: at
// the top level, in an object, an object member as a whole, and one
// name given two values apart.
const sizedTemplate = `{
  "a": "{{int 1 9}}",
  "b | from 500": "{{word}}",
  "c | below 700": "{{bool}}",
  "o": {"x | from 600": 1, "y": 2, "z | from 500 | below 600": 3},
  "w | from 800": {"deep": "{{name}}"},
  "t | below 650": {"$array": "1", "of": "{{word}}"},
  "t | from 650": {"$array": "4", "of": "{{word}}"},
  "g": "{{fill 550}}"
}`

// | from and | below choose a template's members once per event size:
// every event of a size carries exactly the members of that size, at the
// size to the byte, and the template alone is sized by its {{fill}}.
func TestTemplateMembersBySize(t *testing.T) {
	tm := mustTemplate(t, sizedTemplate)
	for _, c := range []struct {
		size   int
		fields []string // top-level and o's members
		tags   int
	}{
		{450, []string{"a", "c", "g", "o", "o.y", "t"}, 1},
		{500, []string{"a", "b", "c", "g", "o", "o.y", "o.z", "t"}, 1},
		{550, []string{"a", "b", "c", "g", "o", "o.y", "o.z", "t"}, 1},
		{600, []string{"a", "b", "c", "g", "o", "o.x", "o.y", "t"}, 1},
		{650, []string{"a", "b", "c", "g", "o", "o.x", "o.y", "t"}, 4},
		{700, []string{"a", "b", "g", "o", "o.x", "o.y", "t"}, 4},
		{800, []string{"a", "b", "g", "o", "o.x", "o.y", "t", "w"}, 4},
		{5000, []string{"a", "b", "g", "o", "o.x", "o.y", "t", "w"}, 4},
	} {
		r := tm
		if c.size != 550 { // the template's own size: no resize
			var err error
			if r, err = tm.resized(c.size); err != nil {
				t.Fatalf("size %d: %v", c.size, err)
			}
		}
		g := mustNew(t, Config{Template: r, Seed: 3})
		for i := range 200 {
			d, _ := g.Next(nil, t0+int64(i))
			if len(d.JSON) != c.size {
				t.Fatalf("size %d: event of %d bytes: %s", c.size, len(d.JSON), d.JSON)
			}
			m := decode(t, d.JSON)
			var got []string
			for k, v := range m {
				if strings.HasPrefix(k, "_") || k == "generator_identifier" {
					continue
				}
				got = append(got, k)
				if o, ok := v.(map[string]any); ok && k == "o" {
					for k := range o {
						got = append(got, "o."+k)
					}
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, c.fields) {
				t.Fatalf("size %d: fields %v, want %v: %s", c.size, got, c.fields, d.JSON)
			}
			if n := len(m["t"].([]any)); n != c.tags {
				t.Fatalf("size %d: %d tags, want %d", c.size, n, c.tags)
			}
		}
	}
	if _, err := tm.resized(tm.least - 1); err == nil || !strings.Contains(err.Error(), "at least") {
		t.Fatalf("a size under the least %d: error %v, want one naming it", tm.least, err)
	}
}

// A bad | from or | below is refused at compile time in one line with
// its line and the fix.
func TestTemplateMembersBySizeRefused(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"{\"a\": 1,\n\"b | form 500\": 1, \"g\": \"{{fill 900}}\"}", `line 2: "b | form 500": "form 500": want | from SIZE or | below SIZE`},
		{"{\"b | from x\": 1, \"g\": \"{{fill 900}}\"}", "from x: want an event size in bytes"},
		{"{\"b | below 0\": 1, \"g\": \"{{fill 900}}\"}", "below 0: want an event size in bytes"},
		{"{\"b | from 600 | below 500\": 1, \"g\": \"{{fill 900}}\"}", "from 600 and below 500: never there"},
		{"{\"a\": 1,\n\"b | from 600\": 1}", "line 2: | from and | below choose members by the event's size, which a {{fill SIZE}} sets; add one"},
		{"{\"a\": 1,\n\"b | from 200\": {\"$array\": \"10\", \"of\": \"{{word}}\"}, \"g\": \"{{fill 900}}\"}", "line 2: | from 200: at 200 bytes the template's other values take up to"},
		{"{\"a\": 1,\n\"a | from 500\": 2, \"g\": \"{{fill 900}}\"}", `line 2: the member "a" is there twice in events of 500 bytes (also line 1); keep them apart`},
		{"{\"g\": \"{{fill 900}}\",\n\"h | from 500\": \"{{fill 900}}\"}", "line 2: a second {{fill}} (the first on line 1)"},
		{"{\"g | below 2000\": \"{{fill 900}}\",\n\"h | from 2000\": \"{{fill 1000}}\"}", "line 2: {{fill 1000}}: the {{fill}} on line 1 says 900; a template's fills give one size"},
		{"{\"a\": 1,\n\"g | below 2000\": \"{{fill 900}}\"}", "line 2: from 2000 bytes no {{fill}} is left to size the event"},
		{"{\"a\": \"{{int 1 5 | from 500}}\", \"g\": \"{{fill 900}}\"}", "| from and | below go after a member's key"},
		{"{\"_seq | from 500\": 1, \"g\": \"{{fill 900}}\"}", `the field "_seq" is one freshbench stamps`},
	} {
		_, err := ParseTemplate([]byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("template %q: error %v, want one line with %q", tc.text, err, tc.want)
		}
	}
	// The size the error names is one the template takes.
	p := filepath.Join(t.TempDir(), "sized.json")
	text := `{"b | from 200": {"$array": "10", "of": "{{word}}"}, "g": "{{fill 900}}"}`
	os.WriteFile(p, []byte(text), 0o600)
	_, err := ParseTemplateFile(p)
	if _, ok := invalid.As(err); !ok || !strings.Contains(err.Error(), p+": line 1: | from 200") {
		t.Fatalf("error %v, want the file, the line and the fix", err)
	}
	least := regexp.MustCompile(`raise it to (\d+)`).FindStringSubmatch(err.Error())
	if least == nil {
		t.Fatalf("error %v names no size", err)
	}
	if _, err := ParseTemplate([]byte(strings.Replace(text, "200", least[1], 1))); err != nil {
		t.Fatalf("the size the error names, %s, refused: %v", least[1], err)
	}
}

// person personal email is the person's own address: its initial and
// last name, in lower case, two digits, at a mail host.
func TestTemplatePersonalEmail(t *testing.T) {
	tm := mustTemplate(t, `{"n": "{{person name}}", "p": "{{person personal email}}"}`)
	hosts := strings.Join(mailHosts, "|")
	re := regexp.MustCompile(`^([a-z])([a-z]+)\d\d@(` + strings.ReplaceAll(hosts, ".", `\.`) + `)$`)
	for _, ev := range events(t, tm, 200) {
		first, last, _ := strings.Cut(ev["n"].(string), " ")
		m := re.FindStringSubmatch(ev["p"].(string))
		if m == nil || m[1] != strings.ToLower(first[:1]) || m[2] != strings.ToLower(last) {
			t.Fatalf("personal email %q of %s %s", ev["p"], first, last)
		}
	}
}
