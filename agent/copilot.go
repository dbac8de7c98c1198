package agent

// copilot is GitHub's Copilot CLI: -p with the prompt as its value,
// --no-ask-user, and write allowed with --allow-tool write. It logs in
// with COPILOT_GITHUB_TOKEN, a token of its own with Copilot requests:
// never wo's push token, which it would also accept as GH_TOKEN.
var copilot = Profile{
	Name: "copilot", Program: "copilot",
	Summary:       "GitHub Copilot CLI (copilot -p)",
	Credentials:   []string{"COPILOT_GITHUB_TOKEN", "COPILOT_PROVIDER_BASE_URL", "COPILOT_PROVIDER_API_KEY", "COPILOT_PROVIDER_TYPE", "COPILOT_MODEL", "COPILOT_OFFLINE"},
	ConfigVar:     "COPILOT_HOME",
	ConfigDefault: ".copilot",
	HomeFiles:     []string{".copilot"},
	Ports:         []int{443},
	Hosts:         []string{"api.githubcopilot.com:443", "api.individual.githubcopilot.com:443", "api.business.githubcopilot.com:443", "api.enterprise.githubcopilot.com:443", "api.github.com:443"},
	GatewayVars:   []string{"COPILOT_PROVIDER_BASE_URL"},
	call: func(args []string, _ CallInput) ([]string, PromptVia) {
		var add []string
		if !hasFlag(args, "--no-ask-user") {
			add = append(add, "--no-ask-user")
		}
		if !hasFlag(args, "--allow-tool", "--allow-all-tools") {
			add = append(add, "--allow-tool", "write")
		}
		args = append(add, args...)
		if !hasFlag(args, "-p", "--prompt") {
			args = append(args, "-p")
		}
		return args, PromptArg
	},
	read: readGeneric,
}
