// Command gh-standin runs the GitHub stand-in — a TEST DOUBLE of GitHub's
// REST API on loopback — for the README demo and for trying wo without
// GitHub. It is not GitHub and never talks to GitHub.
//
//	gh-standin --token T --repo acme/demo=/path/to/origin.git \
//	  --round 'internal/x.go:3:Say why.|internal/y.go:1:Name it.' --url-file url.txt
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wo-runner/wo/integration/ghstandin"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }

func main() {
	var repos, rounds multi
	token := flag.String("token", os.Getenv("STANDIN_TOKEN"), "the one token accepted")
	delay := flag.Duration("review-delay", 500*time.Millisecond, "how long the scripted reviewer takes after each push")
	urlFile := flag.String("url-file", "", "write the base URL to this file once listening")
	openapi := flag.String("openapi", "", "check every request and answer against this OpenAPI description (integration/testdata/openapi/github-subset.json)")
	mode := flag.String("mode", "", "how the reviewer behaves: empty (a review object for every head), coderabbit or copilot (as those bots do on GitHub)")
	defaultBranch := flag.String("default-branch", "main", "coderabbit mode: the repository's default branch; pull requests into others are skipped unless asked")
	stacks := flag.Bool("stacks", false, "enable stacked pull requests (the /stacks operations answer 404 without)")
	flag.Var(&repos, "repo", "owner/name=/path/to/bare.git (repeatable)")
	flag.Var(&rounds, "round", "one review round: path:line:body entries separated by |; an empty round approves (repeatable)")
	flag.Parse()
	if *token == "" {
		fmt.Fprintln(os.Stderr, "gh-standin: give --token (or STANDIN_TOKEN)")
		os.Exit(2)
	}
	s := ghstandin.New(*token)
	if *openapi != "" {
		c, err := ghstandin.LoadContract(*openapi)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gh-standin:", err)
			os.Exit(2)
		}
		s.Contract = c
	}
	s.ReviewDelay = *delay
	s.Stacks = *stacks
	switch *mode {
	case ghstandin.ModeIdealised, ghstandin.ModeCodeRabbit, ghstandin.ModeCopilot:
		s.Mode = *mode
	default:
		fmt.Fprintf(os.Stderr, "gh-standin: --mode %q: write coderabbit, copilot, or nothing\n", *mode)
		os.Exit(2)
	}
	s.CodeRabbit.DefaultBranch = *defaultBranch
	s.Copilot.ReviewOnOpen = true
	for _, r := range repos {
		name, path, ok := strings.Cut(r, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "gh-standin: --repo %q: write owner/name=/path/to/bare.git\n", r)
			os.Exit(2)
		}
		s.Remotes[name] = path
	}
	for _, r := range rounds {
		var round []ghstandin.Comment
		for _, c := range strings.Split(r, "|") {
			if c == "" {
				continue
			}
			parts := strings.SplitN(c, ":", 3)
			if len(parts) != 3 {
				fmt.Fprintf(os.Stderr, "gh-standin: --round entry %q: write path:line:body\n", c)
				os.Exit(2)
			}
			line, _ := strconv.Atoi(parts[1])
			round = append(round, ghstandin.Comment{Path: parts[0], Line: line, Body: parts[2]})
		}
		s.ReviewRounds = append(s.ReviewRounds, round)
	}
	if err := s.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "gh-standin:", err)
		os.Exit(1)
	}
	if *urlFile != "" {
		os.WriteFile(*urlFile, []byte(s.URL), 0o644)
	}
	fmt.Fprintf(os.Stderr, "gh-standin (a test double of GitHub, not GitHub) listening on %s\n", s.URL)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	s.Close()
}
