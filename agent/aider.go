package agent

import "path/filepath"

// aider is Aider. It takes no prompt on stdin when scripted: the prompt
// goes in with --message-file. It commits its own edits unless told not
// to (wo commits, after its gate), keeps its chat histories where the
// flags say (wo's folder for the agent, not the worktree), appends .aider*
// to .gitignore unless --no-gitignore, and writes a tags cache into the
// repository's root whatever the flags say: wo removes it. It ends 0 on
// a missing key and on API errors, so its words and the diff judge it.
var aider = Profile{
	Name: "aider", Program: "aider",
	Summary: "Aider (aider --message-file)",
	Credentials: []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "DEEPSEEK_API_KEY", "OPENROUTER_API_KEY",
		"GROQ_API_KEY", "MISTRAL_API_KEY", "AZURE_API_KEY", "AZURE_API_BASE", "AZURE_API_VERSION", "OPENAI_API_BASE", "AIDER_MODEL"},
	HomeFiles:   []string{".aider"},
	Leaves:      []string{".aider.tags.cache.v3", ".aider.tags.cache.v4", ".aider.chat.history.md", ".aider.input.history", ".aider.llm.history"},
	Ports:       []int{443},
	Hosts:       []string{"api.openai.com:443", "api.anthropic.com:443", "generativelanguage.googleapis.com:443", "api.deepseek.com:443", "openrouter.ai:443"},
	GatewayVars: []string{"OPENAI_API_BASE", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OLLAMA_API_BASE"},
	// With no key and no model it offers a browser login and waits for
	// it, minutes on end.
	KeyRequired: true,
	call:        aiderCall,
	read:        readAider,
}

func aiderCall(args []string, in CallInput) ([]string, PromptVia) {
	var add []string
	if !hasFlag(args, "--message", "-m", "--msg", "--message-file", "-f") {
		add = append(add, "--message-file", in.PromptFile)
	}
	for _, f := range []string{"--yes-always", "--no-auto-commits", "--no-dirty-commits", "--no-gitignore", "--no-check-update", "--no-show-model-warnings", "--no-pretty", "--no-stream", "--analytics-disable"} {
		if !hasFlag(args, f) && !(f == "--no-auto-commits" && hasFlag(args, "--auto-commits")) {
			add = append(add, f)
		}
	}
	if !hasFlag(args, "--chat-history-file") {
		add = append(add, "--chat-history-file", filepath.Join(in.StateDir, "aider.chat.history.md"))
	}
	if !hasFlag(args, "--input-history-file") {
		add = append(add, "--input-history-file", filepath.Join(in.StateDir, "aider.input.history"))
	}
	return append(add, args...), PromptFile
}

// readAider reads Aider's plain text: an exit other than 0 is a failure,
// and so are its words of a missing key or an API error after exit 0.
func readAider(stdout, stderr string, exit int) Report {
	if exit != 0 {
		return readGeneric(stdout, stderr, exit)
	}
	all := stdout + "\n" + stderr
	if f := failureIn(all); f != FailNone {
		return failed(f, errorLines(all))
	}
	return Report{Message: Meaningful(lastLines(stdout, 3))}
}
