package procedure

import (
	"strings"
	"testing"
)

func TestTheApprovalRequestListsWhatItHas(t *testing.T) {
	bare := (&ApprovalRequiredError{Key: "k", Step: 2, Summary: []string{"2 commit"}}).Error()
	with := (&ApprovalRequiredError{Key: "k", Step: 2, Summary: []string{"2 commit"}, Request: []string{"summary: x"}}).Error()
	if strings.Contains(bare, "\n\n") || !strings.Contains(with, "2 commit\nsummary: x\napprove with") {
		t.Errorf("without a request:\n%s\nwith one:\n%s", bare, with)
	}
}
