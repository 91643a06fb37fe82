// Package transfer reads and writes the files a person takes out of Palaver
// and brings into it: Palaver's own export (NDJSON, one exchange or page per
// line) and ChatGPT's export (conversations.json, alone or inside its .zip).
// It knows nothing of the database or HTTP: a store turns Items into rows
// (one transaction per file, matching by uid), and routes and the CLI map
// the errors (ErrInvalid → 400, ErrTooLarge → 413).
//
// Everything streams: the writer writes one line per call, the readers hold
// one line (Palaver) or one conversation (ChatGPT) at a time, so a file of
// hundreds of MiB never sits in memory whole. Every limit is in Options:
// below the decoders a bound refuses a JSON string over MaxStringBytes (a
// file line's "data": over the base64 of MaxFileBytes) and a conversation
// over MaxLineBytes before either is held; each item is
// held to the API's field limits (MaxTitleChars, MaxContentChars, …) and
// the known agent types, its NUL characters and invalid UTF-8 replaced by
// U+FFFD; and what a file stores, the copies its forks make included, is
// capped at StoredFactor times its size and MaxStoredBytes (*LimitError).
//
// # Palaver's export
//
// The first line is the header {"format": "palaver-export", "version": 1,
// "exported_at": …}; each later line is {"type": "exchange", …} or {"type":
// "page", …} with the fields of Exchange and Page. Unknown fields are
// ignored, so a later Palaver may add some. Files come before the
// exchanges that hold them; projects ({"type": "project", …}, a parent
// before the projects inside it) and the person's instructions ({"type":
// "instructions", …}, one line at most) before the exchanges, which name
// their project by project_uid; memory entries ({"type": "memory", …})
// last. An export written before projects has none of these lines.
//
// # ChatGPT's export
//
// A conversation's mapping is a tree of nodes. The path from the root to
// current_node becomes one exchange (the conversation as ChatGPT shows it);
// every other branch becomes a fork of the exchange it leaves, forked at the
// seq where it leaves, holding a copy of the entries before that seq (as a
// Palaver fork does) and then its own. Inside a branch the last child of each
// node is followed (ChatGPT appends a regenerated answer or an edited message
// as the last child); the other children become forks of that fork, and so on.
//
// A node becomes a log entry when it has a message by "user" (user),
// "assistant" (assistant; tool_call when addressed to a tool, recipient not
// "all") or "tool" (tool_result), not hidden (is_visually_hidden_from_
// conversation), of content type text or multimodal_text (string parts
// joined by a blank line), code or execution_output (content.text), with
// some text that is not whitespace or a file the export's zip holds. The
// files a message names (an image part's asset_pointer, "file-service://
// file-XXXX" or "sediment://file_XXXX", and its metadata's attachments)
// that the zip holds (an entry named the id, or the id, "-" and a name, in
// any folder) become file items, each before the first exchange that holds
// it, and the message holds them; a file the zip lacks is left out. A file
// takes the uid UUIDv5 of "chatgpt-file:" + its id.
// Everything else is skipped: the root, system messages, custom
// instructions, browsing displays, reasoning. A message without a time takes
// the one before it. A branch with no entry of its own makes no fork (its
// own branches fork from the same seq of its parent); a second root becomes
// a fork at seq 0, so no message is lost.
//
// ChatGPT's ids become uids deterministically: UUIDv5 (SHA-1) in the fixed
// namespace ChatGPTNamespace, over a name built from the ids (each
// query-escaped, so an id holding ":" or "/" cannot make two names equal):
//
//	current path's exchange  "chatgpt:" + conversation id
//	a fork                   "chatgpt:" + conversation id + ":" + id of the branch's first node
//	a message                its exchange's name + "/" + its node id
//
// A fork is named by the node where its branch starts, not by its leaf, so
// it keeps its uid when the branch grows in a later export; a message copied
// into a fork's shared start gets the fork's own uid. The same file
// therefore gives the same uids every time, and the store's uid matching
// skips what an earlier import stored.
//
// # Left to the store
//
// A reader checks each item on its own and uids across the file; it cannot
// know the importing account. The store resolves page_uid (a page earlier in
// the file, or one the account has), forked_from (an exchange in the file or
// the account; a parent deleted before the export is not there) and a
// revision's message_uid (a message of a later line: resolve after the last
// line), and skips what it already has by uid. Any Next may fail, the last
// included: an importer reads the file whole before it stores anything
// (dataport reads it twice), and undoes what it stored if storing fails.
package transfer
