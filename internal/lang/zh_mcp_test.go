package lang

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/homard/homard/internal/lang/langscan"
)

// zhMCP holds the messages of `homard mcp login` and `logout` and the
// login notes of `homard mcp list` (cmd/homard/mcplogin.go). The binary
// carries it packed (zh_packed.go); TestZhMCPCoversMCPLogin holds it to
// that file's keys.
var zhMCP = map[string]string{
	"Log in to a hosted MCP server (auth = \"oauth\"); its tokens are kept in the vault":                                                                       "登录托管的 MCP 服务器（auth = \"oauth\"）；其令牌保存在保险库中",
	"Open this address in a browser and log in to %s:\n\n  %s\n\n":                                                                                             "在浏览器中打开此地址并登录 %s：\n\n  %s\n\n",
	"Waiting for the browser to come back to homard. If it cannot reach this machine (homard over SSH), paste the address it ended on here, or only its code:": "正在等待浏览器回到 homard。如果浏览器无法访问这台机器（通过 SSH 使用 homard），请把它最后停留的地址粘贴到这里，或只粘贴其中的 code：",
	"logged in to %s: its tokens are in the vault as %s, released only to its host\n":                                                                          "已登录 %s：其令牌以 %s 保存在保险库中，只发给它的主机\n",
	"the access token expires %s; homard refreshes it before\n":                                                                                                "访问令牌于 %s 过期；homard 会在此之前刷新\n",
	"homard mcp test %s lists its tools; they are offered from homard's next start once trusted\n":                                                             "homard mcp test %s 列出其工具；信任后，它们从 homard 下次启动起提供\n",
	"Remove a hosted MCP server's login from the vault":                                                                                                        "从保险库中删除托管 MCP 服务器的登录",
	"logged out of %s: its tokens are removed from the vault (the authorization server may still list the grant; revoke it there)\n":                           "已退出 %s：其令牌已从保险库中删除（授权服务器可能仍保留该授权；请在那里撤销）\n",
	" (not logged in: homard mcp login %s)":                                                                                                                    "（未登录：homard mcp login %s）",
	" (logged in)":                                                                                                                                             "（已登录）",
	" (logged in; token expires %s)":                                                                                                                           "（已登录；令牌于 %s 过期）",
}

// TestZhMCPCoversMCPLogin: every key cmd/homard/mcplogin.go uses has a
// Chinese entry in zhMCP with the same verbs, zhMCP holds no other key,
// and the file leaves no user-facing literal outside the catalog.
func TestZhMCPCoversMCPLogin(t *testing.T) {
	found, err := langscan.Scan(filepath.Join("..", "..", "cmd", "homard"))
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for k, at := range found.Keys {
		if !strings.HasPrefix(at, "mcplogin.go:") {
			continue
		}
		used[k] = true
		v, ok := zhMCP[k]
		switch {
		case !ok:
			t.Errorf("%s: key %q has no entry in zhMCP", at, k)
		case !slices.Equal(langscan.Verbs(k), langscan.Verbs(v)):
			t.Errorf("key %q: translation %q takes other arguments", k, v)
		}
	}
	for k := range zhMCP {
		if !used[k] {
			t.Errorf("zhMCP key %q is not used in cmd/homard/mcplogin.go", k)
		}
	}
	for _, l := range found.Loose {
		if strings.HasPrefix(l, "mcplogin.go:") {
			t.Errorf("a user-facing literal outside the catalog: %s", l)
		}
	}
}
