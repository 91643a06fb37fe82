package views

import "palaver/internal/htmltest"

// The views tests' names for the HTML queries of package htmltest.
var (
	renderHTML  = htmltest.Render
	findAll     = htmltest.FindAll
	byTestID    = htmltest.ByTestID
	byTag       = htmltest.ByTag
	one         = htmltest.One
	attr        = htmltest.Attr
	mustAttr    = htmltest.MustAttr
	textOf      = htmltest.Text
	formValue   = htmltest.FormValue
	nextElement = htmltest.NextElement
)
