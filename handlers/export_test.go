package handlers

// MergeLive is mergeLive, for the tests of what a tab receives.
var MergeLive = mergeLive
