package agent

import "cmp"

// gemini is Google's Gemini CLI: headless with a prompt on stdin and
// --output-format json; it edits only with an approval mode that allows it
// and in a folder it trusts (GEMINI_CLI_TRUST_WORKSPACE headless). It ends
// 42 on bad input and 53 at its turn limit; the JSON's error says why.
var gemini = Profile{
	Name: "gemini", Program: "gemini",
	Summary:       "Google Gemini CLI (gemini -p)",
	Credentials:   []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_GENAI_USE_VERTEXAI", "GEMINI_MODEL", "GOOGLE_GEMINI_BASE_URL"},
	Settings:      map[string]string{"GEMINI_CLI_TRUST_WORKSPACE": "true"},
	ConfigVar:     "GEMINI_CLI_HOME",
	ConfigDefault: ".gemini",
	HomeFiles:     []string{".gemini"},
	Ports:         []int{443},
	Hosts:         []string{"generativelanguage.googleapis.com:443", "cloudcode-pa.googleapis.com:443", "oauth2.googleapis.com:443", "${GOOGLE_CLOUD_LOCATION}-aiplatform.googleapis.com:443"},
	GatewayVars:   []string{"GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL"},
	call: func(args []string, _ CallInput) ([]string, PromptVia) {
		var add []string
		if !hasFlag(args, "--output-format", "-o") {
			add = append(add, "--output-format", "json")
		}
		if !hasFlag(args, "--approval-mode", "--yolo", "-y") {
			add = append(add, "--approval-mode", "auto_edit")
		}
		return append(add, args...), PromptStdin
	},
	read: readGemini,
}

type geminiResult struct {
	Response string `json:"response"`
	Error    *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
		Code    any    `json:"code"`
	} `json:"error"`
	Stats struct {
		Models map[string]struct {
			Tokens struct {
				Total int64 `json:"total"`
			} `json:"tokens"`
		} `json:"models"`
	} `json:"stats"`
}

func readGemini(stdout, stderr string, exit int) Report {
	res, ok := lastJSON[geminiResult](stdout, func(r geminiResult) bool { return r.Response != "" || r.Error != nil })
	var r Report
	if ok {
		r.Message = Meaningful(res.Response)
		for _, m := range res.Stats.Models {
			r.Tokens += m.Tokens.Total
		}
	}
	switch {
	case exit == 53:
		r.Failure, r.Message = FailLimit, cmp.Or(r.Message, "stopped at its turn limit")
	case ok && res.Error != nil:
		f := classify(res.Error.Message + " " + res.Error.Type)
		rep := failed(f, res.Error.Message)
		rep.Tokens = r.Tokens
		return rep
	case exit != 0 || !ok:
		g := readGeneric(stdout, stderr, exit)
		g.Tokens = r.Tokens
		return g
	}
	return r
}
