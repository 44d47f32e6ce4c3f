package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/setup"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) initCmd() *cobra.Command {
	var o config.InitOptions
	cmd := &cobra.Command{
		Use:   "init",
		Short: lang.N("Create config.toml, the data folder, the database and a workspace"),
		Long: lang.N(`init creates a commented config.toml, the data folder with the SQLite
database, and a workspace root, for you to fill in. It refuses to
overwrite an existing config unless --force is given. To connect a model
in one step (provider, key tested and kept in the encrypted vault, mode,
workspace), run 'homard setup' instead: it creates the home too.

The API key is never written to the config: --api-key-env names the
environment variable homard reads it from, or --api-key-secret names a
secret in homard's encrypted vault (set it afterwards with
'homard secret set NAME --host HOST', HOST being base_url's host).`),
		/* lang:en */ Example: `  homard init --home ~/homard
  homard init --provider anthropic --mode safe
  homard init --provider openai --base-url http://127.0.0.1:11434/v1 --model qwen3 --api-key-env OLLAMA_KEY`,
	}
	f := cmd.Flags()
	f.StringVar(&o.Provider, "provider", "", c.say.Sprintf("model provider: %s (default openai; homard setup also tests it and stores the key)", config.ProviderNames()))
	f.StringVar(&o.BaseURL, "base-url", "", lang.N("model API base `URL` (default per provider)"))
	f.StringVar(&o.Model, "model", "", lang.N("model `NAME` (default per provider)"))
	f.StringVar(&o.APIKeySecret, "api-key-secret", "", lang.N("vault secret `NAME` holding the API key, instead of an environment variable"))
	f.StringVar(&o.APIKeyEnv, "api-key-env", "", lang.N("environment `VAR` holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY)"))
	f.StringVar(&o.Mode, "mode", "", lang.N("permission mode: safe, smart, autopilot or yolo (default smart)"))
	f.BoolVar(&o.Force, "force", false, lang.N("overwrite an existing config.toml"))
	return leafCmd(cmd, cobra.NoArgs, func(ctx context.Context, _ []string) error {
		p, err := c.paths()
		if err != nil {
			return err
		}
		// The store is created where this home's runtime will look for it
		// (c.open): HOMARD_STORE_URL's, else store.url's, else data/homard.db.
		override := os.Getenv(config.StoreEnv)
		cfg, err := setup.Init(ctx, p, o, override)
		if err != nil {
			return err
		}
		_, name := cfg.StoreURL(p.DBFile, override)
		c.say.Fprintf(c.stdout, "created %s\n", termtext.Line(p.ConfigFile))
		c.say.Fprintf(c.stdout, "database  %s\n", termtext.Line(name))
		for _, r := range cfg.Workspace.Roots {
			c.say.Fprintf(c.stdout, "workspace %s (%s)\n", termtext.Line(r.Path), termtext.Line(r.Name))
		}
		c.say.Fprintf(c.stdout, "mode      %s\n", cfg.Permissions.Mode)
		c.say.Fprintln(c.stdout, "next: homard setup   (connect the model: provider, key, test)")
		return nil
	})
}
