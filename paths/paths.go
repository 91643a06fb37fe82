// Package paths builds the addresses of Palaver's HTML routes: one place to
// change a path that handlers redirect to and views link or post to. The
// route table itself is handlers/routes.go; a test there checks that every
// route with a parameter has its builder here, and that each builder's
// address matches its route. The package imports nothing of Palaver's, so
// any layer may use it.
package paths

import (
	"net/url"
	"strconv"
)

// Fixed addresses.
const (
	Login             = "/login"
	Register          = "/register"
	Logout            = "/logout"
	ChatHome          = "/chat" // the current conversation
	ChatHistory       = "/chat/history"
	ChatNew           = "/chat/new"
	ChatSend          = "/chat/send"
	ChatClear         = "/chat/clear"
	ChatSearch        = "/chat/search"   // the search of one's conversations (?q=)
	ChatArchived      = "/chat/archived" // the archived conversations
	Live              = "/live"
	Pages             = "/pages"
	Admin             = "/admin"
	AdminExchanges    = "/admin/exchanges"
	AdminAudit        = "/admin/audit"
	AdminUsers        = "/admin/users"
	AdminHousekeeping = "/admin/housekeeping"
	AdminVacuum       = "/admin/housekeeping/vacuum"
	AdminOrphans      = "/admin/housekeeping/orphans"
	AdminBlobs        = "/admin/housekeeping/blobs"
	AdminRetention    = "/admin/housekeeping/retention"
	AdminRetentionRun = "/admin/housekeeping/retention/run"
	AdminRetentionDry = "/admin/housekeeping/retention/dry-run"
	Account           = "/account"           // the account page: password, API keys, data
	AccountPassword   = "/account/password"  // change one's own password
	AccountKeys       = "/account/keys"      // create an API key
	AccountDelete     = "/account/delete"    // delete one's own account
	AccountImport     = "/account/import"    // import a file (the account page's form)
	Export            = "/api/export"        // download everything one owns (NDJSON)
	Import            = "/api/import"        // import a Palaver or ChatGPT export
	AccountOIDCLink   = "/account/oidc/link" // link an identity at the form's provider (single sign-on)
	AccountTools      = "/account/tools"     // the tool permissions (the account page's form)
	Files             = "/api/files"         // one's files: upload (POST), list (GET)
)

// OIDCStart signs in through the provider called name: /auth/oidc/{name}.
func OIDCStart(name string) string { return "/auth/oidc/" + url.PathEscape(name) }

// OIDCCallback is where the provider sends the browser back:
// /auth/oidc/{name}/callback.
func OIDCCallback(name string) string { return OIDCStart(name) + "/callback" }

// AccountIdentityUnlink unlinks one of one's identities at a provider:
// /account/identities/{id}/unlink.
func AccountIdentityUnlink(identityID int64) string {
	return "/account/identities/" + id(identityID) + "/unlink"
}

// File is one of one's files, its bytes: /api/files/{id}.
func File(fileID int64) string { return Files + "/" + id(fileID) }

// FileThumbnail is an image file's thumbnail: /api/files/{id}/thumbnail.
func FileThumbnail(fileID int64) string { return File(fileID) + "/thumbnail" }

// AccountKeyRevoke revokes one of one's API keys: /account/keys/{id}/revoke.
func AccountKeyRevoke(keyID int64) string { return AccountKeys + "/" + id(keyID) + "/revoke" }

// ExchangeExport downloads one conversation with its whole log, as JSON
// or Markdown ("json" or "md"): /api/chat/exchange/{id}/export?format=….
func ExchangeExport(exchangeID int64, format string) string {
	return "/api/chat/exchange/" + id(exchangeID) + "/export?format=" + url.QueryEscape(format)
}

func id(n int64) string { return strconv.FormatInt(n, 10) }

// Chat is one general conversation: /chat/{id}.
func Chat(exchangeID int64) string { return ChatHome + "/" + id(exchangeID) }

// ChatListedFrom is a conversation with its sidebar's history starting
// after the cursor before ("": at the top), the older conversations
// without JavaScript.
func ChatListedFrom(exchangeID int64, before string) string {
	if before == "" {
		return Chat(exchangeID)
	}
	return Chat(exchangeID) + "?before=" + url.QueryEscape(before)
}

// ChatRename, ChatDelete, ChatStop and ChatRetry act on a conversation.
func ChatRename(exchangeID int64) string { return Chat(exchangeID) + "/rename" }
func ChatDelete(exchangeID int64) string { return Chat(exchangeID) + "/delete" }
func ChatStop(exchangeID int64) string   { return Chat(exchangeID) + "/stop" }
func ChatRetry(exchangeID int64) string  { return Chat(exchangeID) + "/retry" }

// ChatTools answers a waiting tool call of a conversation (the approval
// card's forms, without JavaScript too).
func ChatTools(exchangeID int64) string { return Chat(exchangeID) + "/tools" }

// ChatPin and ChatArchive pin and archive a conversation (or undo it).
func ChatPin(exchangeID int64) string     { return Chat(exchangeID) + "/pin" }
func ChatArchive(exchangeID int64) string { return Chat(exchangeID) + "/archive" }

// MessageEdit is the edit of a user message (a fork of its conversation
// at its seq, with the new text): GET the form, POST the new text.
func MessageEdit(messageID int64) string { return message(messageID) + "/edit" }

// MessageRegenerate is a new answer in place of a reply, in a fork of its
// conversation at its seq: GET asks first (without JavaScript), POST
// makes it.
func MessageRegenerate(messageID int64) string { return message(messageID) + "/regenerate" }

// MessageInstructions shows what the agent was told for a reply: the
// composed instructions and memory its turn used (its owner only).
func MessageInstructions(messageID int64) string { return message(messageID) + "/instructions" }

func message(messageID int64) string { return ChatHome + "/message/" + id(messageID) }

// ChatAtSeq is a conversation opened on its message at seq, which the
// transcript highlights.
func ChatAtSeq(exchangeID, seq int64) string { return Chat(exchangeID) + "?seq=" + id(seq) }

// ChatAt is a conversation as it was when its entry at seq was written
// (time travel, read-only): /chat/{id}?at={n}, n the entry's number as the
// screen counts it, from 1 (seq+1): the address and "message 10 of 10" say
// the same. The JSON API's ?at= stays a seq.
func ChatAt(exchangeID, seq int64) string { return Chat(exchangeID) + "?" + atParam(seq) }

// atParam is time travel's point in an HTML address: the entry's number.
func atParam(seq int64) string { return "at=" + id(seq+1) }

// ChatBefore is a conversation opened on the window of entries before seq,
// the older messages without JavaScript; at >= 0 keeps time travel's point.
func ChatBefore(exchangeID, seq, at int64) string {
	u := Chat(exchangeID) + "?before_seq=" + id(seq)
	if at >= 0 {
		u += "&" + atParam(at)
	}
	return u
}

// ChatContinue forks a conversation where time travel shows it: POST with
// the form's at.
func ChatContinue(exchangeID int64) string { return Chat(exchangeID) + "/continue" }

// ChatMessages is the route of the transcript's windows (HTML fragments);
// the windows themselves are ChatMessagesBefore and ChatMessagesAfter.
func ChatMessages(exchangeID int64) string { return Chat(exchangeID) + "/messages" }

// ChatMessagesBefore is the window of entries before seq, for the top of the
// transcript as the person scrolls up; at >= 0 (time travel's point) makes
// its entries read-only.
func ChatMessagesBefore(exchangeID, seq, at int64) string {
	u := ChatMessages(exchangeID) + "?before_seq=" + id(seq)
	if at >= 0 {
		u += "&" + atParam(at)
	}
	return u
}

// ChatMessagesAfter is the window of entries after seq, for the bottom of a
// transcript opened on a window (a search hit).
func ChatMessagesAfter(exchangeID, seq int64) string {
	return ChatMessages(exchangeID) + "?after_seq=" + id(seq)
}

// ChatBranches draws a conversation's family of branches as a tree.
func ChatBranches(exchangeID int64) string { return Chat(exchangeID) + "/branches" }

// ChatCompareChoose takes the tree's form (two ?branch= ids) to the
// comparison of those two.
func ChatCompareChoose(exchangeID int64) string { return Chat(exchangeID) + "/compare" }

// ChatCompare shows two branches of one family side by side from where
// they part.
func ChatCompare(exchangeID, other int64) string {
	return ChatCompareChoose(exchangeID) + "/" + id(other)
}

// ChatSubRun is the log of a sub-run a conversation's agent delegated to
// (a search of the user's chats): /chat/{id}/subruns/{sub}.
func ChatSubRun(exchangeID, subRunID int64) string {
	return Chat(exchangeID) + "/subruns/" + id(subRunID)
}

// MessageFeedback rates an assistant reply: /chat/message/{id}/feedback.
func MessageFeedback(messageID int64) string {
	return ChatHome + "/message/" + id(messageID) + "/feedback"
}

// Page is /pages/{id}, which leads to the page's editor.
func Page(pageID int64) string { return Pages + "/" + id(pageID) }

// PageEdit is the page's editor with its chat panel.
func PageEdit(pageID int64) string { return Page(pageID) + "/edit" }

// PageSave, PagePreview, PageDelete and PagePanel are the editor's actions.
func PageSave(pageID int64) string    { return Page(pageID) + "/save" }
func PagePreview(pageID int64) string { return Page(pageID) + "/preview" }
func PageDelete(pageID int64) string  { return Page(pageID) + "/delete" }
func PagePanel(pageID int64) string   { return Page(pageID) + "/panel" }

// Revision shows an earlier revision against the page's text now.
func Revision(pageID, revisionID int64) string {
	return Page(pageID) + "/revisions/" + id(revisionID)
}

// RevisionRestore makes an earlier revision the page's content again.
func RevisionRestore(pageID, revisionID int64) string {
	return Page(pageID) + "/revisions/" + id(revisionID) + "/restore"
}

// PageChat is where the page's chat panel sends; PageChatNew and
// PageChatClear start a new chat and delete them all.
func PageChat(pageID int64) string      { return Page(pageID) + "/chat" }
func PageChatNew(pageID int64) string   { return PageChat(pageID) + "/new" }
func PageChatClear(pageID int64) string { return PageChat(pageID) + "/clear" }

// PageChatOpen opens one of the page's chats in its panel.
func PageChatOpen(pageID, exchangeID int64) string { return PageChat(pageID) + "/" + id(exchangeID) }

// PageChatAtSeq is one of the page's chats opened in its panel on its
// message at seq, which the panel highlights.
func PageChatAtSeq(pageID, exchangeID, seq int64) string {
	return PageChatOpen(pageID, exchangeID) + "?seq=" + id(seq)
}

// PageChatDelete deletes one of the page's chats.
func PageChatDelete(pageID, exchangeID int64) string {
	return PageChatOpen(pageID, exchangeID) + "/delete"
}

// ProposalAccept and ProposalReject decide a proposal of the page assistant.
func ProposalAccept(pageID, messageID int64) string { return proposal(pageID, messageID) + "/accept" }
func ProposalReject(pageID, messageID int64) string { return proposal(pageID, messageID) + "/reject" }

func proposal(pageID, messageID int64) string {
	return Page(pageID) + "/proposals/" + id(messageID)
}

// AdminExchange is someone's conversation in the admin area (a gate that
// asks for a reason, then the log).
func AdminExchange(exchangeID int64) string { return AdminExchanges + "/" + id(exchangeID) }

// AdminExchangesOf is the admin list filtered to one user's conversations.
func AdminExchangesOf(userID int64) string { return AdminExchanges + "?user=" + id(userID) }

// AdminAuditOf is the audit log of one conversation.
func AdminAuditOf(exchangeID int64) string { return AdminAudit + "?exchange=" + id(exchangeID) }

// AdminUserPromote … AdminUserDelete act on an account.
func AdminUserPromote(userID int64) string  { return adminUser(userID, "promote") }
func AdminUserDemote(userID int64) string   { return adminUser(userID, "demote") }
func AdminUserDisable(userID int64) string  { return adminUser(userID, "disable") }
func AdminUserEnable(userID int64) string   { return adminUser(userID, "enable") }
func AdminUserPassword(userID int64) string { return adminUser(userID, "password") }
func AdminUserDelete(userID int64) string   { return adminUser(userID, "delete") }

func adminUser(userID int64, verb string) string { return AdminUsers + "/" + id(userID) + "/" + verb }

// AtMessage is u scrolled to a message of its transcript (the element id
// views give a message: msg-{id}).
func AtMessage(u string, messageID int64) string { return u + "#msg-" + id(messageID) }

// WithQuery is u with the query q ("" or empty: none).
func WithQuery(u string, q url.Values) string {
	if len(q) == 0 {
		return u
	}
	return u + "?" + q.Encode()
}

// Shares (issue 28): a link to a snapshot of a conversation.
const (
	AccountShares = "/account/shares" // the account page's list of links
	AdminShares   = "/admin/shares"   // every user's links
	ChatReadAll   = "/chat/read-all"  // mark every conversation read
)

// Share is a share link's page: /s/{token}. The token is URL-safe base64.
func Share(token string) string { return "/s/" + token }

// ShareAPI is a share link's snapshot as JSON: /api/s/{token}.
func ShareAPI(token string) string { return "/api" + Share(token) }

// ShareContinue copies a share's snapshot into the viewer's own account:
// POST with the page's at.
func ShareContinue(token string) string { return Share(token) + "/continue" }

// ShareFile is a file of a share's snapshot, through the share's own
// route: /s/{token}/files/{id}. Only a file an entry of the snapshot holds
// opens there.
func ShareFile(token string, fileID int64) string { return Share(token) + "/files/" + id(fileID) }

// ShareFileThumbnail is an image of a share's snapshot, its thumbnail.
func ShareFileThumbnail(token string, fileID int64) string {
	return ShareFile(token, fileID) + "/thumbnail"
}

// ChatShare is a conversation's share form (GET) and what it posts to.
func ChatShare(exchangeID int64) string { return Chat(exchangeID) + "/share" }

// AccountShareRevoke revokes one of one's share links.
func AccountShareRevoke(shareID int64) string { return AccountShares + "/" + id(shareID) + "/revoke" }

// AccountShareUpdate re-snapshots one of one's share links to the
// conversation's latest entry, keeping its address.
func AccountShareUpdate(shareID int64) string { return AccountShares + "/" + id(shareID) + "/update" }

// AdminShareRevoke revokes anyone's share link (audited).
func AdminShareRevoke(shareID int64) string { return AdminShares + "/" + id(shareID) + "/revoke" }

// ChatRead and ChatUnread mark a conversation read or unread.
func ChatRead(exchangeID int64) string   { return Chat(exchangeID) + "/read" }
func ChatUnread(exchangeID int64) string { return Chat(exchangeID) + "/unread" }

// Projects, the person's instructions and memory (issue 27).
const (
	Projects            = "/projects"             // the list, and the new-project form's target
	AccountInstructions = "/account/instructions" // About me / How to answer
	AccountMemories     = "/account/memories"     // add a memory entry
)

// Project is a project's page: /projects/{id}.
func Project(projectID int64) string { return Projects + "/" + id(projectID) }

// ProjectInstructions saves a project's instructions: /projects/{id}/instructions.
func ProjectInstructions(projectID int64) string { return Project(projectID) + "/instructions" }

// ProjectDelete deletes a project: /projects/{id}/delete.
func ProjectDelete(projectID int64) string { return Project(projectID) + "/delete" }

// ProjectChat starts a chat in a project: /projects/{id}/chat.
func ProjectChat(projectID int64) string { return Project(projectID) + "/chat" }

// ProjectModel sets a project's default model: /projects/{id}/model.
func ProjectModel(projectID int64) string { return Project(projectID) + "/model" }

// ProjectFiles adds a file to a project (a multipart upload):
// /projects/{id}/files.
func ProjectFiles(projectID int64) string { return Project(projectID) + "/files" }

// ProjectFileDelete removes a file from a project:
// /projects/{id}/files/{file}/delete.
func ProjectFileDelete(projectID, fileID int64) string {
	return ProjectFiles(projectID) + "/" + id(fileID) + "/delete"
}

// ChatProject is a chat's move to a project (GET the form, POST it): /chat/{id}/project.
func ChatProject(exchangeID int64) string { return Chat(exchangeID) + "/project" }

// ChatKeep makes a temporary chat a normal one: /chat/{id}/keep.
func ChatKeep(exchangeID int64) string { return Chat(exchangeID) + "/keep" }

// AccountMemory edits a memory entry: /account/memories/{id}.
func AccountMemory(memoryID int64) string { return AccountMemories + "/" + id(memoryID) }

// AccountMemoryDelete deletes a memory entry: /account/memories/{id}/delete.
func AccountMemoryDelete(memoryID int64) string { return AccountMemory(memoryID) + "/delete" }

// Models (issue 29): the administrators' connections and models, and the
// usage of every person.
const (
	AdminModels      = "/admin/models"      // connections and their models
	AdminConnections = "/admin/connections" // POST: add a connection
	AdminUsage       = "/admin/usage"       // tokens and cost per person, model and day
	AccountModel     = "/account/model"     // POST: the person's default model
	// AccountModelFavourite stars the form's model (favourite=1), unstars
	// it (0), or, with no favourite field (the picker's star), toggles it.
	AccountModelFavourite = "/account/models/favourite"
	// AccountSearchReasoning says whether search matches replies' reasoning.
	AccountSearchReasoning = "/account/search-reasoning"
)

// AdminConnection edits a connection (name, base URL, key).
func AdminConnection(connID int64) string { return AdminConnections + "/" + id(connID) }

// AdminConnectionTest lists a connection's models from its server now.
func AdminConnectionTest(connID int64) string { return AdminConnection(connID) + "/test" }

// AdminConnectionDelete removes a connection and its models.
func AdminConnectionDelete(connID int64) string { return AdminConnection(connID) + "/delete" }

// AdminModel edits a model: display name, prices, enabled, default.
func AdminModel(modelID int64) string { return AdminModels + "/" + id(modelID) }
