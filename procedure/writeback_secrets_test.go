package procedure

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/redact"
	"github.com/wo-runner/wo/workorder"
)

// A review comment can quote the token (a reviewer pasting a log): the
// state written back carries the mask instead, and the comment itself is
// kept.
func TestTheWriteBackMasksTheToken(t *testing.T) {
	h := newStepContext(t, stepOpts{GitHub: true})
	h.setState(func(s *stateT) {
		s.ReviewComments = []workorder.ReviewComment{{ID: 1, Author: "coderabbitai[bot]", Path: "foundation/new.go", Line: 3,
			Body: "The log says Authorization: token " + fixture.Token}}
		s.ReviewThreads = []workorder.ReviewThread{{ID: "T1", Path: "foundation/new.go", Line: 3, Counted: true,
			Comments: []workorder.ThreadComment{{ID: 1, Author: "coderabbitai[bot]", Body: "In the thread: token " + fixture.Token}}}}
	})
	doc, err := h.store.Get(h.ctx, fixture.Key)
	if err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprint(doc)
	if strings.Contains(text, fixture.Token) || !strings.Contains(text, "Authorization: token "+redact.Mask) || !strings.Contains(text, "In the thread: token "+redact.Mask) {
		t.Errorf("the stored document: %s", text)
	}
	if st := h.stored(); len(st.ReviewComments) != 1 || len(st.ReviewThreads) != 1 {
		t.Errorf("comments %v, threads %v: the comment and the thread must still be there", st.ReviewComments, st.ReviewThreads)
	}
}

// update_task's status reaches the document through the engine's
// write-back of the step.
func TestUpdateTaskMovesTheStoredStatus(t *testing.T) {
	h := newStepContext(t, stepOpts{GitHub: true})
	h.upTo("push")
	h.must("push")
	h.must("create_pr")
	h.setState(func(s *stateT) {
		s.ReviewComments, s.ReviewVerdicts = []workorder.ReviewComment{}, map[string]string{"coderabbitai[bot]": "APPROVED"}
		s.ReviewCheckedSHA = s.PushedSHA
	})
	h.must("cleanup_worktree")
	out, err := h.run("update_task")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.r.complete(h.ctx, h.step("update_task"), out, 0); err != nil {
		t.Fatal(err)
	}
	doc, _ := h.store.Get(h.ctx, fixture.Key)
	if doc["status"] != "in_review" || workorder.String(doc, "work_order.state.review_result") != "no review comments at the last check" {
		t.Errorf("stored status %v, review_result %v", doc["status"], workorder.String(doc, "work_order.state.review_result"))
	}
}

// The agent's prompt carries the mask, not the token, when a review
// comment quotes it: through the engine's own run, whose secrets are the
// GitHub token in every form wo sends it.
func TestTheEnginesRunMasksTheTokenInTheAgentsPrompt(t *testing.T) {
	h := loopReady(t, stepOpts{GitHub: true, Agent: "cat > ../prompt.txt\necho '// fixed' >> foundation/new.go\n"})
	h.setState(func(s *stateT) {
		s.ReviewComments = append(s.ReviewComments, workorder.ReviewComment{ID: 2003, Author: "coderabbitai[bot]",
			Body: "The log says Authorization: token " + fixture.Token})
	})
	h.must("conditional_loop")
	prompt := fixture.ReadFile(t, filepath.Join(h.WtRoot, "prompt.txt"))
	if strings.Contains(prompt, fixture.Token) || !strings.Contains(prompt, "Authorization: token "+redact.Mask) {
		t.Errorf("the agent's prompt:\n%s", prompt)
	}
}
