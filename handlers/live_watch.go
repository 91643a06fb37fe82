package handlers

import (
	"palaver/agents"
)

// watch switches the connection to the exchange the tab shows and sends it
// what it lacks (screens.LiveWatch).
func (s *liveSession) watch(req liveRequest) error {
	since := int64(-1)
	if req.Since != nil {
		since = *req.Since
	}
	u, err := s.h.screens.LiveWatch(s.ctx, s.viewer(), &s.tab, req.ExchangeID, since, req.PageID, req.Switches)
	if err != nil {
		return err
	}
	if err := s.send(u); err != nil {
		return err
	}
	return s.flush()
}

// event shows one thing that happened to the user's data (screens.LiveEvent).
func (s *liveSession) event(e agents.Event) error {
	u, err := s.h.screens.LiveEvent(s.ctx, s.viewer(), &s.tab, e, s.sub.Lagged())
	if err != nil {
		return err
	}
	return s.send(u)
}
