// Palaver's own browser code: small progressive enhancements on top of
// server-rendered HTML and htmx. Every feature works without it.
"use strict";
