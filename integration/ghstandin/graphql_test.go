package ghstandin

import (
	"slices"
	"strings"
	"testing"
)

func TestGraphQLValidationRefusesWhatGitHubRefuses(t *testing.T) {
	wrong := map[string]string{
		"a misspelt field":      `{repository(owner:"a",name:"b"){pullRequest(number:1){reviewThreads(first:100){nodes{isOutdatedd}}}}}`,
		"a field on no type":    `{repository(owner:"a",name:"b"){pullRequest(number:1){reviewThreads(first:100){nodes{id state}}}}}`,
		"a missing argument":    `{repository(owner:"a"){id}}`,
		"an input GitHub lacks": `mutation{resolveReviewThread(input:{id:"T"}){thread{id}}}`,
		"a wrong variable type": `query($n:String!){repository(owner:"a",name:"b"){pullRequest(number:$n){id}}}`,
	}
	for name, q := range wrong {
		if _, err := ValidateGraphQL(q, map[string]any{"n": "1"}); err == nil {
			t.Errorf("%s passes validation: %s", name, q)
		}
	}
	ok := `mutation($input:AddPullRequestReviewThreadReplyInput!){addPullRequestReviewThreadReply(input:$input){comment{id}}}`
	if _, err := ValidateGraphQL(ok, map[string]any{"input": map[string]any{"pullRequestReviewThreadId": "T", "body": "x"}}); err != nil {
		t.Errorf("a valid mutation fails: %v", err)
	}
	if _, err := ValidateGraphQL(ok, map[string]any{"input": map[string]any{"threadId": "T"}}); err == nil {
		t.Error("variables of the wrong input type pass")
	}
	// The defect of the published file that the loader works around is
	// exactly the known one; a new version with more is noticed here.
	want := []string{"EnterpriseOwnerInfo.repositoryDeployKeySetting", "EnterpriseOwnerInfo.repositoryDeployKeySettingOrganizations"}
	if got := slices.Clone(RepeatedSchemaFields); !slices.Equal(got, want) {
		t.Errorf("fields defined twice in the schema: %s", strings.Join(got, ", "))
	}
}

// GitHub's GraphQL API names an app's bot without "[bot]" and says it is a
// Bot; a person is a User.
func TestActorsAreNamedAsGitHubsGraphQLNamesThem(t *testing.T) {
	if got := actorNode("coderabbitai[bot]"); got["login"] != "coderabbitai" || got["__typename"] != "Bot" {
		t.Errorf("a bot: %v", got)
	}
	if got := actorNode("alice"); got["login"] != "alice" || got["__typename"] != "User" {
		t.Errorf("a person: %v", got)
	}
}

func TestGraphQLBetweenPollsIsCounted(t *testing.T) {
	poll := func(status int) Request {
		return Request{Method: "GET", Path: "/repos/a/b/pulls/1/reviews", Status: status}
	}
	gql := Request{Method: "POST", Path: "/graphql", Status: 200}
	comments := Request{Method: "GET", Path: "/repos/a/b/pulls/1/comments", Status: 200}
	if n := Summarize([]Request{poll(200), poll(304), gql, poll(304)}).GraphQLBetweenPolls; n != 1 {
		t.Errorf("GraphQL in the middle of a wait counted %d times, want 1", n)
	}
	// A check after the wait: the reviews, the comments, then GraphQL.
	if n := Summarize([]Request{poll(304), poll(200), poll(304), comments, gql}).GraphQLBetweenPolls; n != 0 {
		t.Errorf("GraphQL of a check counted %d times, want 0", n)
	}
}
