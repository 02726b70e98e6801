"""`python -m flake8_http_pool`: the same command as the `flake8-http-pool` console script."""

from .cli import console_main

if __name__ == "__main__":
    console_main()
