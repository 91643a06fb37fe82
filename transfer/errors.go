package transfer

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrInvalid is what every error about the file's content matches with
// errors.Is: the file cannot be imported, and the error's text says where
// (a line, a conversation, a zip entry). An HTTP layer answers it with 400.
// Errors that do not match it come from reading the input (a closed
// connection, a full disk while spooling) and are not the file's fault.
var ErrInvalid = errors.New("invalid import file")

// ErrTooLarge is returned when the input passes Options.MaxInputBytes. An
// HTTP layer answers it with 413.
var ErrTooLarge = errors.New("import file too large")

// LineError is a problem with one line of a Palaver export.
type LineError struct {
	Line int // 1-based
	Err  error
}

func (e *LineError) Error() string { return "line " + strconv.Itoa(e.Line) + ": " + e.Err.Error() }

// Unwrap gives the underlying problem.
func (e *LineError) Unwrap() error { return e.Err }

// Is makes every LineError match ErrInvalid.
func (e *LineError) Is(target error) bool { return target == ErrInvalid }

// FormatError is a Palaver export whose header names a format or version
// this package does not read.
type FormatError struct {
	Format  string
	Version int
}

func (e *FormatError) Error() string {
	if e.Format != FormatName {
		return fmt.Sprintf("line 1: unknown format %q (expected %q)", e.Format, FormatName)
	}
	return fmt.Sprintf("line 1: unsupported %s version %d (this Palaver reads version %d)", FormatName, e.Version, Version)
}

// Is makes every FormatError match ErrInvalid.
func (e *FormatError) Is(target error) bool { return target == ErrInvalid }

// ConversationError is a problem with one conversation of a ChatGPT export.
type ConversationError struct {
	Index int    // 1-based position in the array
	Title string // may be empty
	ID    string // may be empty
	Err   error
}

func (e *ConversationError) Error() string { return e.label() + ": " + e.Err.Error() }

// label names the conversation: `conversation 12 ("Trip plan", id abc)`.
func (e *ConversationError) label() string {
	s := "conversation " + strconv.Itoa(e.Index)
	switch {
	case e.Title != "" && e.ID != "":
		s += fmt.Sprintf(" (%q, id %s)", clip(e.Title), clip(e.ID))
	case e.ID != "":
		s += " (id " + clip(e.ID) + ")"
	case e.Title != "":
		s += fmt.Sprintf(" (%q)", clip(e.Title))
	}
	return s
}

// Unwrap gives the underlying problem.
func (e *ConversationError) Unwrap() error { return e.Err }

// Is makes every ConversationError match ErrInvalid.
func (e *ConversationError) Is(target error) bool { return target == ErrInvalid }

// invalid wraps a message as an ErrInvalid error.
func invalid(format string, args ...any) error {
	return &invalidError{msg: fmt.Sprintf(format, args...)}
}

type invalidError struct{ msg string }

func (e *invalidError) Error() string        { return e.msg }
func (e *invalidError) Is(target error) bool { return target == ErrInvalid }

// LimitError is a file over one of the import's limits: a field longer
// than the API allows, a string or a conversation longer than the decoder
// holds, more stored bytes than the file may create. Its text names the
// limit.
type LimitError struct {
	What string // "the title", "a string", …
	Max  int64
	Unit string // "characters", "bytes"
	Have int64  // 0: not known (the reading stopped at the limit)
	Why  string // how the limit is set, if not fixed
}

func (e *LimitError) Error() string {
	s := fmt.Sprintf("%s is longer than the %d %s allowed", e.What, e.Max, e.Unit)
	if e.Have > 0 {
		s = fmt.Sprintf("%s has %d %s, more than the %d allowed", e.What, e.Have, e.Unit, e.Max)
	}
	if e.Why != "" {
		s += " (" + e.Why + ")"
	}
	return s
}

// Is makes every LimitError match ErrInvalid.
func (e *LimitError) Is(target error) bool { return target == ErrInvalid }
