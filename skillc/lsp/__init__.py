"""The language server (`skillc lsp`, extra `skillc[lsp]`)."""
