// Package invalid is the error of a setting a user can fix. The library
// names its fields in its own words ("batch size"); the command line maps
// each field to its flag and exits 2 (errors.As finds an *Error anywhere
// in the chain).
package invalid

import (
	"errors"
	"fmt"
)

// Field names a setting in the library's words, e.g. "batch size".
// Every field is declared in fields.go.
type Field string

// Error says which field is wrong, its value, and what is accepted.
type Error struct {
	Field Field  // the library's name for the field, e.g. BatchSize
	Value string // the value given, as text
	Want  string // what is accepted, e.g. "1 or more"
	Err   error  // the cause, when another package found the fault
}

func (e *Error) Error() string {
	if e.Err != nil && e.Want == "" {
		return fmt.Sprintf("%s %s: %v", e.Field, e.Value, e.Err)
	}
	return fmt.Sprintf("%s %s: want %s", e.Field, e.Value, e.Want)
}

func (e *Error) Unwrap() error { return e.Err }

// New is a bad value of field.
func New(field Field, value any, want string) error {
	return &Error{Field: field, Value: fmt.Sprint(value), Want: want}
}

// Wrap marks err, found while using field's value, as the user's to fix.
func Wrap(field Field, value any, err error) error {
	return &Error{Field: field, Value: fmt.Sprint(value), Err: err}
}

// As returns the *Error in err's chain, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
