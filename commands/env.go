package commands

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"
)

// wo reads its environment only through Factory.Getenv: the real process
// passes os.Getenv, a test its own map, so no test sees a developer's
// WO_STORE and the command tests run in parallel. urfave/cli's EnvVars
// would read the process environment behind the factory's back, so no flag
// sets them (TestNoFlagReadsTheProcessEnvironment): flagEnv says which
// variable a flag falls back to, the help and docs/cli.md print it from
// there, and bindEnv applies it.

// flagEnv is the environment variable each flag falls back to when the
// command line does not give it: the names of the configuration table in
// the design, the same for a flag in every command that has it.
var flagEnv = map[string]string{
	"store":            "WO_STORE",
	"database":         "WO_DATABASE",
	"collection":       "WO_COLLECTION",
	"store-timeout":    "WO_STORE_TIMEOUT",
	"github-api":       "GITHUB_API_URL",
	"agent":            "WO_AGENT",
	"agent-env":        "WO_AGENT_ENV",
	"agent-timeout":    "WO_AGENT_TIMEOUT",
	"agent-sandbox":    "WO_AGENT_SANDBOX",
	"agent-writable":   "WO_AGENT_WRITABLE",
	"agent-readable":   "WO_AGENT_READABLE",
	"agent-allow-host": "WO_AGENT_ALLOW_HOST",
	"max-agent-rounds": "WO_MAX_AGENT_ROUNDS",
	"max-agent-cost":   "WO_MAX_AGENT_COST",
	"review-wait":      "WO_REVIEW_WAIT",
	"poll-interval":    "WO_POLL_INTERVAL",
	"git-timeout":      "WO_GIT_TIMEOUT",
	"git-stall":        "WO_GIT_STALL",
}

// envVarsOf is the environment variable a flag falls back to, for help and
// docs: none, or one.
func envVarsOf(fl cli.Flag) []string {
	if env, ok := flagEnv[fl.Names()[0]]; ok {
		return []string{env}
	}
	return nil
}

// bindEnv makes cmd (and its subcommands) fill each flag the command line
// left out from its environment variable, read through the factory, before
// anything reads the flags. An empty variable counts as unset.
func (f *Factory) bindEnv(cmd *cli.Command) {
	for _, sub := range cmd.Subcommands {
		f.bindEnv(sub)
	}
	if cmd.Action == nil {
		return
	}
	action := cmd.Action
	cmd.Action = func(c *cli.Context) error {
		if err := f.applyEnv(c, cmd); err != nil {
			return err
		}
		return action(c)
	}
}

// pathListEnv are the variables that hold a list of paths, :-separated
// as PATH is: the command reads them itself, since a flag would split the
// value at commas, which paths may hold.
var pathListEnv = map[string]bool{"WO_AGENT_WRITABLE": true, "WO_AGENT_READABLE": true}

func (f *Factory) applyEnv(c *cli.Context, cmd *cli.Command) error {
	for _, fl := range cmd.Flags {
		name := fl.Names()[0]
		env, ok := flagEnv[name]
		if !ok || c.IsSet(name) || pathListEnv[env] {
			continue
		}
		value := f.Getenv(env)
		if value == "" {
			continue
		}
		var err error
		if _, isDuration := fl.(*cli.DurationFlag); isDuration {
			if _, err = time.ParseDuration(value); err != nil {
				err = fmt.Errorf("%w; give a duration such as 90s or 5m, or unset it", err)
			}
		}
		if err == nil {
			err = c.Set(name, value)
		}
		if err != nil {
			return &usageError{command: cmd.Name, msg: fmt.Sprintf("environment variable %s (for --%s): %v", env, name, err)}
		}
	}
	return nil
}
