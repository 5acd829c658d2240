"""Generated protocol code (``proto/generate.py``); never edit by hand."""
