package handlers

import "palaver/views"

// MergeLive is mergeLive, for the tests of what a tab receives.
var MergeLive = mergeLive

// LiveFrameKey is liveFrameKeyOf, for the tests: the key of the frame kept
// for u, comparable, or false when u is rendered per tab.
func LiveFrameKey(u *views.LiveUpdate) (any, bool) { return liveFrameKeyOf(u) }

// OpenAPIPayloads are the bodies the JSON handlers decode, by the name of
// their schema in openapi.json: the test checks the two list the same fields.
var OpenAPIPayloads = map[string]any{
	"ChatPayload":            apiChatPayload{},
	"RegeneratePayload":      apiRegeneratePayload{},
	"ForkPayload":            apiForkPayload{},
	"BatchDeletePayload":     apiBatchDeletePayload{},
	"ExchangeUpdate":         apiExchangeUpdatePayload{},
	"MessageFeedbackPayload": apiMessageFeedbackPayload{},
	"AcceptPayload":          apiAcceptPayload{},
	"ProjectInput":           apiProjectPayload{},
	"MemoryInput":            apiMemoryPayload{},
}
