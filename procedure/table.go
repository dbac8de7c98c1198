package procedure

import "github.com/wo-runner/wo/procedure/action"

// defaultTable is the table of actions of this build of wo.
var defaultTable = action.DefaultActions()
