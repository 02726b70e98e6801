"""A pytest test replaces `httpx.get` with monkeypatch.setattr.

Risk (mocks): after HTP101's fix the loop calls `client.get` on an
httpx.Client, which the monkeypatched module function no longer reaches.
RULES.md: HTP101 is report only where `monkeypatch.setattr(httpx, "get", ...)`
patches the rewritten name.
"""
# expect: report-only HTP101
# run: pytest
import os

import httpx

import weather

BASE = os.environ["SAFETY_BASE"]


class _Reading:
    def json(self):
        return {"id": "21C"}


def test_temperatures_use_the_fake(monkeypatch):
    calls = []

    def fake_get(url, **kwargs):
        calls.append(url)
        return _Reading()

    monkeypatch.setattr(httpx, "get", fake_get)
    assert weather.temperatures(BASE, ["oslo", "rome"]) == ["21C", "21C"]
    assert len(calls) == 2
