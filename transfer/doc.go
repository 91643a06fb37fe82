// Package transfer reads and writes the files a person takes out of Palaver
// and brings into it: Palaver's own export (NDJSON, one exchange or page per
// line) and ChatGPT's export (conversations.json, alone or inside its .zip).
// It knows nothing of the database or HTTP: a store turns Items into rows
// (one transaction per file, matching by uid), and routes and the CLI map
// the errors (ErrInvalid → 400, ErrTooLarge → 413).
//
// Everything streams: the writer writes one line per call, the readers hold
// one line (Palaver) or one conversation (ChatGPT) at a time, so a file of
// hundreds of MiB never sits in memory whole. Every limit is in Options.
//
// # Palaver's export
//
// The first line is the header {"format": "palaver-export", "version": 1,
// "exported_at": …}; each later line is {"type": "exchange", …} or {"type":
// "page", …} with the fields of Exchange and Page. Unknown fields are
// ignored, so a later Palaver may add some.
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
// ChatGPT's ids become uids deterministically (UUIDv5, SHA-1, in the namespace
// ChatGPTNamespace): the exchange of the main path from "chatgpt:" + the
// conversation id, a fork from that + ":" + the id of the first node of its
// branch (not its leaf, so the fork keeps its uid when the branch later
// grows), and a message from its exchange's name + ":" + the node id. The same
// file therefore gives the same uids every time, and the store's uid matching
// skips what an earlier import stored.
package transfer
