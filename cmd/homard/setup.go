package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/setup"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) setupCmd() *cobra.Command {
	var o setup.Options
	var nonInteractive, keyStdin bool
	cmd := &cobra.Command{
		Use:   "setup",
		Short: lang.N("Connect a model in one step: provider, model, key, mode, workspace"),
		Long: lang.N(`setup asks which model provider to use (OpenAI, Anthropic, DeepSeek,
OpenRouter, Moonshot/Kimi, Qwen, Zhipu GLM, MiniMax, SiliconFlow, Volcengine
Ark/Doubao, Tencent Hunyuan, Baidu Qianfan, Ollama found on this machine,
vLLM, llama.cpp; docs/PROVIDERS.md), the model, the API key, the permission mode and the workspace
folders. It tests the provider with one tiny request before writing
anything and says exactly what failed; a failed test writes nothing unless
--skip-test.

The key is stored encrypted in homard's vault (secret model-PROVIDER, bound
to the endpoint's host), never in config.toml and never shown. Without a
home, setup creates one as 'homard init' would; run again, it edits
config.toml in place and keeps your comments and other settings.

Every question has a flag; --non-interactive asks nothing and keeps what
no flag changes: the provider, its base URL, model and key (a key already
in the vault is used again), the mode and the workspace folders. Only a
first setup needs --provider.`),
		/* lang:en */ Example: `  homard setup
  homard setup --non-interactive --provider deepseek --api-key-stdin < key.txt
  homard setup --non-interactive --provider zhipu --api-key-stdin < key.txt
  homard setup --non-interactive --provider volcengine --model ep-20250101123456-abcde --api-key-stdin < key.txt
  homard setup --non-interactive --provider ollama --model qwen3:8b
  homard setup --non-interactive --provider vllm --base-url http://127.0.0.1:8000/v1 --model Qwen/Qwen3-8B
  homard setup --non-interactive --mode autopilot`,
	}
	f := cmd.Flags()
	f.BoolVar(&nonInteractive, "non-interactive", false, lang.N("ask nothing: take every answer from the flags"))
	f.StringVar(&o.Provider, "provider", "", c.say.Sprintf("`NAME`: %s (default: keep; required in a new home)", config.ProviderNames()))
	f.StringVar(&o.BaseURL, "base-url", "", lang.N("API base `URL` (default per provider)"))
	f.StringVar(&o.Model, "model", "", lang.N("model `NAME` (default per provider; required for local servers)"))
	f.BoolVar(&keyStdin, "api-key-stdin", false, lang.N("read the API key from stdin (one line) and keep it in the vault"))
	f.StringVar(&o.Mode, "mode", "", lang.N("permission mode: safe, smart, autopilot or yolo (default: keep, or smart)"))
	f.StringSliceVar(&o.Workspaces, "workspace", nil, lang.N("`DIR` tools may use (repeat for more; the first is root main; default: keep, or the home's workspace)"))
	f.StringSliceVar(&o.ReadOnly, "read-only", nil, lang.N("`DIR` tools may read but never change, e.g. your home (repeat for more; default: keep)"))
	f.BoolVar(&o.SkipTest, "skip-test", false, lang.N("write the config without testing the provider first"))
	f.StringVar(&o.OllamaURL, "ollama-url", setup.DefaultOllamaURL, lang.N("where to look for Ollama (`URL`)"))
	f.DurationVar(&o.TestTimeout, "test-timeout", 30*time.Second, lang.N("how long the provider test may take"))
	return leafCmd(cmd, cobra.NoArgs, func(ctx context.Context, _ []string) error {
		p, err := c.paths()
		if err != nil {
			return err
		}
		if keyStdin && !nonInteractive {
			return usage(c.say.Errorf("--api-key-stdin goes with --non-interactive; the wizard asks for the key itself (not shown)"))
		}
		if keyStdin {
			key, err := c.readKeyLine(c.stdin)
			if err != nil {
				return err
			}
			o.APIKey = key
		}
		if !nonInteractive {
			if !c.terminal() {
				return usage(c.say.Errorf("setup asks its questions in a terminal; in a script pass --non-interactive --provider P (and --model, --api-key-stdin...)"))
			}
			if err := c.setupWizard(cmd, p, &o); err != nil {
				return err
			}
		}
		if !o.SkipTest {
			c.say.Fprintf(c.stdout, "testing %s...\n", termtext.Line(cmp.Or(o.Provider, c.say.T("the configured provider"))))
		}
		o.Say = c.say
		o.StoreURL = os.Getenv(config.StoreEnv) // a new home's store: where its runtime will look (c.open)
		res, err := setup.Run(ctx, p, o)
		if err != nil {
			return err
		}
		c.printSetup(res)
		return nil
	})
}

// readKeyLine reads the key from the first line of r.
func (c *cli) readKeyLine(r io.Reader) (string, error) {
	line, err := bufio.NewReaderSize(io.LimitReader(r, 64<<10), 64<<10).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", c.say.Errorf("read the API key from stdin: %w", err)
	}
	key := strings.TrimSpace(line)
	if key == "" {
		return "", usage(c.say.Errorf("--api-key-stdin: stdin is empty; pipe the key in, e.g. homard setup ... --api-key-stdin < key.txt"))
	}
	return key, nil
}

// printSetup says what setup did and what to do next. The key is never
// printed, only where it lives.
func (c *cli) printSetup(res setup.Result) {
	m := res.Config.Model
	if res.Test != nil {
		c.say.Fprintf(c.stdout, "ok in %s · reply \"%s\"\n", res.Test.Latency.Round(time.Millisecond), termtext.Line(firstLine(res.Test.Reply)))
	} else {
		c.say.Fprintln(c.stdout, "provider test skipped (--skip-test): run homard provider test when the server is up")
	}
	if res.Created {
		c.say.Fprintf(c.stdout, "created %s\n", termtext.Line(res.ConfigFile))
	} else {
		c.say.Fprintf(c.stdout, "updated %s\n", termtext.Line(res.ConfigFile))
	}
	if res.Migrated != "" {
		c.say.Fprintf(c.stdout, "migrated  %s\n", termtext.Line(res.Migrated))
	}
	c.say.Fprintf(c.stdout, "model     %s · %s · %s\n", termtext.Line(m.Provider), termtext.Line(m.BaseURL), termtext.Line(m.Name))
	c.say.Fprintf(c.stdout, "key       %s\n", termtext.Line(res.KeyFrom))
	c.say.Fprintf(c.stdout, "mode      %s\n", termtext.Line(res.Config.Permissions.Mode))
	for _, r := range res.Config.Workspace.Roots {
		access := ""
		if r.ReadOnly() {
			access = c.say.T(", read-only")
		}
		c.say.Fprintf(c.stdout, "workspace %s (%s%s)\n", termtext.Line(r.Path), termtext.Line(r.Name), access)
	}
	if res.Toolchains != "" {
		c.say.Fprintf(c.stdout, "toolchains %s\n", termtext.Line(res.Toolchains))
	}
	c.say.Fprintln(c.stdout, `next: homard run "what can you do?"   (or homard chat)`)
}
