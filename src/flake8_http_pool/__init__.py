"""flake8-http-pool: find HTTP client code that throws connections away, and rewrite it to reuse them."""

__version__ = "0.1.0"
