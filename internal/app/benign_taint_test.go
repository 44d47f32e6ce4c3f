package app

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/homard/homard/internal/channel"
)

// benignTask is an owner's everyday task mixing their data and the web,
// played by a scripted model, with the asks each taint setting should
// make in autopilot (every ask is approved once, so the task goes on).
type benignTask struct {
	name   string
	owner  string            // what the owner typed
	files  map[string]string // notes/… in the workspace
	memory []string
	calls  []proposal // "{A}" stands for the web server's URL
	// asks under permissions.taint = "session" and "value"
	session, value int
}

// Private texts of the suite: ordinary notes, nothing a redactor knows.
const (
	todoNote     = "Renew the car insurance before March 12, call Dr Amari about the knee"
	tripNote     = "Trip to Lisbon in May with Sam, hotel booked at Rua das Flores 28"
	journalNote  = "Walked the hiking trail near Grenoble with Ines, her new number is 06 48 22 19 73"
	shoppingNote = "Buy a Fairphone 5 case, oat milk, and batteries for the smoke alarm"
	codeNote     = "package main\n\nfunc main() {\n\tcfg := loadSettings(\"/etc/ledgerd.toml\")\n\tserve(cfg)\n}\n"
	readmeNote   = "ledgerd keeps the books. Docs: https://pkg.go.dev/github.com/example/ledgerd/api\n"
	publicPage   = "Opening hours of the municipal library: Monday to Saturday, 9am to 7pm"
)

func benignTasks() []benignTask {
	read := func(f string) proposal { return proposal{"read_file", `{"path":"notes/` + f + `"}`} }
	search := func(q string) proposal { return proposal{"web_search", `{"query":` + mustQuote(q) + `}`} }
	get := func(path string) proposal { return proposal{"http_get", `{"url":"{A}` + path + `"}`} }
	todo := map[string]string{"notes/todo.md": todoNote}
	trip := map[string]string{"notes/trip.md": tripNote}
	return []benignTask{
		{"todo then weather", "what's on my list, and the weather tomorrow?", todo, nil,
			[]proposal{read("todo.md"), search("weather Paris tomorrow")}, 1, 0},
		{"trip then museums", "plan a museum day on my trip", trip, nil,
			[]proposal{read("trip.md"), search("best museums Lisbon")}, 1, 0},
		{"trip then tram map", "how do I get around on my trip?", trip, nil,
			[]proposal{read("trip.md"), get("/lisbon/tram-map")}, 1, 0},
		{"code then error message", "why does my program time out?", map[string]string{"notes/main.go": codeNote}, nil,
			[]proposal{read("main.go"), search("golang context deadline exceeded http client")}, 1, 0},
		{"shopping, the owner's own words", "find reviews of the Fairphone 5", map[string]string{"notes/shopping.md": shoppingNote}, nil,
			[]proposal{read("shopping.md"), search("Fairphone 5 reviews")}, 1, 0},
		{"memory then bus times", "when is the judo class, and when is the next bus?", nil, []string{"Lea's judo class is on Wednesday at 5pm"},
			[]proposal{get("/bus/line-12")}, 1, 0},
		{"notes to a summary file", "summarise my todo into notes/summary.md", todo, nil,
			[]proposal{read("todo.md"), {"write_file", `{"path":"notes/summary.md","content":"- insurance\n- doctor\n"}`}}, 0, 0},
		{"web first, then notes", "look up the library hours and check my todo", todo, nil,
			[]proposal{search("municipal library opening hours"), read("todo.md")}, 0, 0},
		{"journal then a hike", "suggest a hike for this weekend", map[string]string{"notes/journal.md": journalNote}, nil,
			[]proposal{read("journal.md"), search("easy hikes this weekend Alps")}, 1, 0},
		{"todo then two lookups", "what do I need for the insurance renewal?", todo, nil,
			// "car insu…" is in the note and not in what the owner typed:
			// the tripwire fires on the search, not on the other request.
			[]proposal{read("todo.md"), search("car insurance renewal documents"), get("/insurers/compare")}, 2, 1},
		{"listing and two notes then a lookup", "what's planned? also the exchange rate", map[string]string{"notes/todo.md": todoNote, "notes/trip.md": tripNote}, nil,
			[]proposal{{"list_dir", `{"path":"notes"}`}, read("todo.md"), read("trip.md"), get("/rates/EUR")}, 1, 0},
		{"grep then a lookup", "find where I wrote about the knee and what helps knee pain", todo, nil,
			[]proposal{{"grep", `{"pattern":"knee","path":"notes"}`}, search("exercises for knee pain")}, 1, 0},
		{"nothing private", "what time is it, and what's new in Go?", nil, nil,
			[]proposal{{"current_time", `{}`}, search("Go release notes")}, 0, 0},
		{"a page then the same words in a note", "are the library hours in my notes right?", map[string]string{"notes/library.md": publicPage}, nil,
			[]proposal{get("/library"), read("library.md"), search("municipal library: Monday to Saturday")}, 1, 0},
		{"a URL the owner gave", "read my readme and check https://status.example/ledgerd", map[string]string{"notes/readme.md": readmeNote}, nil,
			[]proposal{read("readme.md"), get("/status")}, 1, 0},
		{"code then the standard library docs", "what does my main do?", map[string]string{"notes/main.go": codeNote}, nil,
			[]proposal{read("main.go"), get("/pkg/os")}, 1, 0},
		// Where value taint asks too: the request carries the note itself.
		{"journal phrase searched", "where did I hike with Ines?", map[string]string{"notes/journal.md": journalNote}, nil,
			[]proposal{read("journal.md"), search("hiking trail near Grenoble")}, 1, 1},
		{"readme's docs link", "open my project's docs", map[string]string{"notes/readme.md": readmeNote}, nil,
			[]proposal{read("readme.md"), search("pkg.go.dev/github.com/example/ledgerd/api")}, 1, 1},
		{"a phone number looked up", "whose number is in my journal?", map[string]string{"notes/journal.md": journalNote}, nil,
			[]proposal{read("journal.md"), search("06 48 22 19 73")}, 1, 1},
		{"the hotel address on a map", "show my hotel on a map", trip, nil,
			[]proposal{read("trip.md"), get("/maps?q=Rua%20das%20Flores%2028")}, 1, 1},
	}
}

// newWebServer is the suite's web: search results for /rss, and the
// library's page (publicPage) for every other path.
func newWebServer(t *testing.T) *recorder {
	rec := &recorder{}
	rec.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.hits.Add(1)
		if strings.HasPrefix(r.URL.Path, "/rss") {
			w.Header().Set("Content-Type", "application/rss+xml")
			fmt.Fprint(w, `<?xml version="1.0"?><rss><channel><item><title>t</title><link>https://x.example/</link></item></channel></rss>`)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, publicPage)
	}))
	t.Cleanup(rec.Close)
	return rec
}

// TestBenignSuiteAsks runs 20 everyday tasks mixing the owner's data and
// the web in autopilot under both taint settings and counts the cards:
// value taint never asks more than the session mark, asks only when the
// request carries the note itself, and each task asks exactly as listed.
// `go test -v -run TestBenignSuiteAsks ./internal/app` prints the totals
// the README quotes.
func TestBenignSuiteAsks(t *testing.T) {
	tasks := benignTasks()
	if len(tasks) < 20 {
		t.Fatalf("%d tasks; the suite has at least 20", len(tasks))
	}
	totals := map[string]int{}
	for _, setting := range []string{"session", "value"} {
		for _, task := range tasks {
			t.Run(setting+"/"+task.name, func(t *testing.T) {
				web := newWebServer(t)
				r := newEgressRuntime(t, "autopilot", web, func(s string) string {
					return strings.Replace(s, `taint = "session"`, `taint = "`+setting+`"`, 1)
				})
				for f, text := range task.files {
					writeWorkspaceFile(t, r, f, text+"\n")
				}
				for _, m := range task.memory {
					if _, err := r.Owner.MemoryAdd(context.Background(), m, "fact", 0); err != nil {
						t.Fatal(err)
					}
				}
				calls := make([]proposal, len(task.calls))
				for i, c := range task.calls {
					calls[i] = proposal{c.tool, strings.ReplaceAll(c.args, "{A}", web.URL)}
				}
				runServer(t, r, script(calls...)...)
				asks := 0
				_, outs := turn(t, r, "t", task.owner, func(context.Context, channel.Card) (channel.Choice, error) {
					asks++
					return channel.Once, nil
				})
				ran := 0
				for _, out := range outs {
					switch out.Status {
					case "ran":
						ran++
					case "pending": // the card, then the call runs once approved
					default:
						t.Errorf("%s = %s (%s: %s); want every call to run, approved when asked", out.Name, out.Status, out.Rule, out.Reason)
					}
				}
				if ran != len(calls) {
					t.Errorf("%d of %d calls ran", ran, len(calls))
				}
				want := task.session
				if setting == "value" {
					want = task.value
				}
				if asks != want {
					t.Errorf("%d asks; want %d", asks, want)
				}
				totals[setting] += asks
			})
		}
	}
	t.Logf("%d tasks: %d asks with taint = \"session\" (%.2f a task), %d with taint = \"value\" (%.2f a task)",
		len(tasks), totals["session"], float64(totals["session"])/float64(len(tasks)),
		totals["value"], float64(totals["value"])/float64(len(tasks)))
	if totals["value"] > totals["session"] {
		t.Errorf("value taint asked %d times, the session mark %d: it must never ask more", totals["value"], totals["session"])
	}
}
