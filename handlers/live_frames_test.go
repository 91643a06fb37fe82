package handlers_test

import (
	"reflect"
	"testing"

	"palaver/handlers"
	"palaver/views"
)

// A whole frame is kept for every tab by its update's content: every field
// of an update, changed, changes the key or makes the update one rendered
// per tab, so a tab is never sent the frame of another update.
func TestLiveFrameKeyFollowsEveryField(t *testing.T) {
	after, text := int64(7), "so far"
	base := views.LiveUpdate{
		Entries:    []views.ChatMessage{{ID: 7, Role: views.RoleUser, Text: "hi"}},
		CloseReply: true, OpenReply: &after, ReplyText: &text, Delta: "more",
		Turn:    &views.TurnControl{ExchangeID: 3, Status: views.TurnRunning, CSRF: "tok"},
		History: &views.HistoryItem{ID: 3, Title: "t"}, Moved: true, Removed: 4,
	}
	key, ok := handlers.LiveFrameKey(&base)
	if !ok {
		t.Fatal("a turn's update is not kept")
	}
	ty := reflect.TypeOf(base)
	for i := range ty.NumField() {
		name := ty.Field(i).Name
		for _, v := range variants(t, base, i) {
			k, ok := handlers.LiveFrameKey(&v)
			if ok && k == key {
				t.Errorf("%s changed, and the update has the same key", name)
			}
		}
	}
	// The same content in other memory is the same key.
	same := base
	same.Entries = append([]views.ChatMessage(nil), base.Entries...)
	after2, text2 := after, text
	same.OpenReply, same.ReplyText = &after2, &text2
	if k, ok := handlers.LiveFrameKey(&same); !ok || k != key {
		t.Error("an equal update has another key")
	}
}

// variants are copies of u with its field i changed every way that matters:
// set, unset, or holding another value.
func variants(t *testing.T, u views.LiveUpdate, i int) []views.LiveUpdate {
	var out []views.LiveUpdate
	add := func(change func(f reflect.Value)) {
		v := u
		change(reflect.ValueOf(&v).Elem().Field(i))
		out = append(out, v)
	}
	f := reflect.ValueOf(u).Field(i)
	switch f.Kind() {
	case reflect.Bool:
		add(func(f reflect.Value) { f.SetBool(!f.Bool()) })
	case reflect.Int64:
		add(func(f reflect.Value) { f.SetInt(f.Int() + 1) })
	case reflect.String:
		add(func(f reflect.Value) { f.SetString(f.String() + "x") })
	case reflect.Slice:
		add(func(f reflect.Value) { f.Set(reflect.Append(f, reflect.Zero(f.Type().Elem()))) })
		if f.Len() > 0 {
			add(func(f reflect.Value) { f.Set(reflect.Zero(f.Type())) })
			add(func(f reflect.Value) {
				c := reflect.MakeSlice(f.Type(), f.Len(), f.Len())
				reflect.Copy(c, f)
				changeValue(t, c.Index(0))
				f.Set(c)
			})
		}
	case reflect.Pointer:
		if f.IsNil() {
			add(func(f reflect.Value) { f.Set(reflect.New(f.Type().Elem())) })
		} else {
			add(func(f reflect.Value) { f.Set(reflect.Zero(f.Type())) })
			add(func(f reflect.Value) {
				c := reflect.New(f.Type().Elem())
				c.Elem().Set(f.Elem())
				changeValue(t, c.Elem())
				f.Set(c)
			})
		}
	default:
		t.Fatalf("LiveUpdate.%s is a %s: teach this test (and liveFrameKey) about it", reflect.TypeOf(u).Field(i).Name, f.Kind())
	}
	return out
}

// changeValue changes one plain value inside v (its first field, for a
// struct).
func changeValue(t *testing.T, v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for j := range v.NumField() {
			if k := v.Field(j).Kind(); k == reflect.Int64 || k == reflect.String || k == reflect.Bool || k == reflect.Int {
				changeValue(t, v.Field(j))
				return
			}
		}
		t.Fatalf("%s has no plain field to change", v.Type())
	case reflect.Int64, reflect.Int:
		v.SetInt(v.Int() + 1)
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	default:
		t.Fatalf("cannot change a %s", v.Kind())
	}
}
