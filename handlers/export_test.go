package handlers

import "palaver/views"

// MergeLive is mergeLive, for the tests of what a tab receives.
var MergeLive = mergeLive

// LiveFrameKey is liveFrameKeyOf, for the tests: the key of the frame kept
// for u, comparable, or false when u is rendered per tab.
func LiveFrameKey(u *views.LiveUpdate) (any, bool) { return liveFrameKeyOf(u) }
