"""Analysis of matches: every decision of a seat evaluated against its legal alternatives,
by sampled playouts over what that seat knew (docs/analysis.md)."""
