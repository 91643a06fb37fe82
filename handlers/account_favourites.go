package handlers

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"palaver/paths"
	"palaver/views"
)

// checkFavourite checks the person may pick the model they star: an
// unknown or disabled one is a 400 naming the choices (the rule of POST
// /api/chat's model).
func (h *Handlers) checkFavourite(c *fiber.Ctx, id int64) error {
	if id <= 0 {
		return fiber.NewError(fiber.StatusBadRequest, "model must be the id of one of GET /api/models")
	}
	return h.checkModel(c, &id)
}

// accountModelFavourite stars the form's model (favourite=1) or unstars it
// (0): the account page's list, which htmx puts back in place. Without a
// favourite field it toggles the model: the picker's star, which posts
// the composer's form (its message is not sent); htmx puts the picker back
// in place with that model still chosen, and without JavaScript the
// browser goes back to the page it came from.
func (h *Handlers) accountModelFavourite(c *fiber.Ctx) error {
	id, err := strconv.ParseInt(c.FormValue("model"), 10, 64)
	if err != nil {
		return refuse(fiber.StatusUnprocessableEntity, "Choose one of the models offered.")
	}
	if err := h.checkFavourite(c, id); err != nil {
		return err
	}
	ctx, u := c.UserContext(), currentUser(c)
	var on bool
	switch c.FormValue("favourite") {
	case "1":
		on = true
	case "0":
	case "":
		favs, err := h.store.FavouriteModels(ctx, u.ID)
		if err != nil {
			return err
		}
		return h.starFromPicker(c, id, !slices.Contains(favs, id))
	default:
		return refuse(fiber.StatusUnprocessableEntity, "Say whether to star the model (favourite=1) or not (0).")
	}
	if err := h.store.SetFavouriteModel(ctx, u.ID, id, on); err != nil {
		return err
	}
	list := func() error {
		ms, err := h.defaultModelChoices(c)
		if err != nil {
			return err
		}
		return render(c, fiber.StatusOK, views.ModelFavourites(ms, h.csrfToken(c)))
	}
	if !inPlace(c, list) {
		h.sessions.Put(ctx, sessAccountFlash, "Favourite models saved.")
	}
	return done(c, paths.Account, list)
}

// starFromPicker stars or unstars the picker's chosen model.
func (h *Handlers) starFromPicker(c *fiber.Ctx, id int64, on bool) error {
	ctx := c.UserContext()
	if err := h.store.SetFavouriteModel(ctx, currentUser(c).ID, id, on); err != nil {
		return err
	}
	return done(c, backTo(c, paths.ChatHome), func() error {
		ms, err := h.screens.ModelPicker(ctx, h.viewer(c), id)
		if err != nil {
			return err
		}
		return render(c, fiber.StatusOK, views.ModelPicker(ms))
	})
}

// backTo is the page of this site the request came from (its Referer,
// which the Referrer-Policy sends for the site's own pages), else def.
func backTo(c *fiber.Ctx, def string) string {
	ref, err := url.Parse(c.Get(fiber.HeaderReferer))
	if err != nil || ref.Host != c.Hostname() || !strings.HasPrefix(ref.Path, "/") || strings.HasPrefix(ref.Path, "//") {
		return def
	}
	return ref.RequestURI()
}

// accountSearchReasoning sets whether the person's searches match replies'
// reasoning (on=1) or not (the box left unticked).
func (h *Handlers) accountSearchReasoning(c *fiber.Ctx) error {
	var on bool
	switch c.FormValue("on") {
	case "1":
		on = true
	case "":
	default:
		return refuse(fiber.StatusUnprocessableEntity, "Tick the box or leave it empty.")
	}
	if err := h.store.SetSearchReasoning(c.UserContext(), currentUser(c).ID, on); err != nil {
		return err
	}
	return h.accountDone(c, "Search settings saved.")
}
