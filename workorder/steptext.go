package workorder

import (
	"errors"
	"slices"
)

// stepText checks a step's message, title and body fields: strings whose
// placeholders resolve. Which action reads them, and what it does when they
// are missing, is the action's to say (workorder.Options.Advice).
func (v *validator) stepText(path string, s map[string]any) {
	for _, f := range []string{"message", "title", "body"} {
		text, ok := v.optString(s, path, f)
		if !ok {
			continue
		}
		var unknown *UnknownPlaceholderError
		if _, err := NewScope(v.doc).Render(text); errors.As(err, &unknown) {
			unknown.Names = slices.DeleteFunc(unknown.Names, func(n string) bool { return slices.Contains(v.opts.LaterNames, n) })
			if len(unknown.Names) > 0 {
				v.errorf(path+"."+f, "%v", unknown)
			}
		}
	}
}
