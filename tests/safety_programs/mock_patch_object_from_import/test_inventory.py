"""A unit test patches the module's own `get` with mock.patch.object.

Risk (mocks, imports): the loop calls `get` from `from requests import get`;
a fix that calls a session instead bypasses the patch, and one that removes
the made-unused import takes away the attribute the test patches
(AttributeError). RULES.md: HTP101 is report only where the rewritten name is
patched, and a fix never removes a module-level name that is patched.
"""
# expect: report-only HTP101
# run: pytest
import os
from unittest import mock

import inventory

BASE = os.environ["SAFETY_BASE"]


def test_stock_levels_read_the_patched_get():
    fake = mock.Mock()
    fake.return_value.json.return_value = {"id": "12"}
    with mock.patch.object(inventory, "get", fake):
        assert inventory.stock_levels(BASE, ["a", "b"]) == ["12", "12"]
    assert fake.call_count == 2
