// Command prview prints a pull request as a GitHub API answers for it —
// its title, branches, description and review comments — for make demo,
// which has the GitHub stand-in (a test double) and no gh:
//
//	prview API_URL OWNER/NAME NUMBER   (the token in GITHUB_TOKEN)
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: prview API_URL OWNER/NAME NUMBER")
		os.Exit(2)
	}
	base := strings.TrimRight(os.Args[1], "/") + "/repos/" + os.Args[2] + "/pulls/" + os.Args[3]
	var pr struct {
		Title, Body, State string
		Head, Base         struct{ Ref string }
		User               struct{ Login string }
	}
	var comments []struct {
		Path, Body string
		Line       int
		User       struct{ Login string }
	}
	if err := get(base, &pr); err != nil {
		fmt.Fprintln(os.Stderr, "prview:", err)
		os.Exit(1)
	}
	if err := get(base+"/comments", &comments); err != nil {
		fmt.Fprintln(os.Stderr, "prview:", err)
		os.Exit(1)
	}
	fmt.Printf("#%s %s (%s, %s → %s)\n\n", os.Args[3], pr.Title, pr.State, pr.Head.Ref, pr.Base.Ref)
	for _, line := range strings.Split(strings.TrimSpace(pr.Body), "\n") {
		fmt.Println("    " + line)
	}
	fmt.Printf("\nreview comments (%d):\n", len(comments))
	for _, c := range comments {
		fmt.Printf("    %s:%d %s: %s\n", c.Path, c.Line, c.User.Login, strings.SplitN(c.Body, "\n", 2)[0])
	}
}

func get(url string, v any) error {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+os.Getenv("GITHUB_TOKEN"))
	req.Header.Set("Accept", "application/vnd.github+json")
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.Unmarshal(body, v)
}
