"""The stand-in `requests.exceptions`: the hierarchy programs catch."""

from __future__ import annotations

from typing import Any


class RequestException(IOError):
    """There was an ambiguous exception while handling the request."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.response = kwargs.pop("response", None)
        self.request = kwargs.pop("request", None)
        if self.response is not None and self.request is None:
            self.request = getattr(self.response, "request", None)
        super().__init__(*args, **kwargs)


class InvalidJSONError(RequestException):
    pass


class JSONDecodeError(InvalidJSONError, ValueError):
    pass


class HTTPError(RequestException):
    pass


class ConnectionError(RequestException):
    pass


class Timeout(RequestException):
    pass


class InvalidSchema(RequestException, ValueError):
    pass


class MissingSchema(RequestException, ValueError):
    pass


class StreamConsumedError(RequestException, TypeError):
    pass
