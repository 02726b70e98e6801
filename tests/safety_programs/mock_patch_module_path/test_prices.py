"""The shop's unit test stubs the pricing API with mock.patch on a dotted path.

Risk (mocks): `mock.patch("shop.prices.requests.get")` replaces the function
the loop calls; after HTP101's fix the loop calls `session.get`, the patch no
longer applies, the test talks to the real server and fails. RULES.md: HTP101
is report only where the project patches the rewritten name.
"""
# expect: report-only HTP101
# run: pytest
import os
from unittest import mock

from shop import prices

BASE = os.environ["SAFETY_BASE"]


def test_prices_come_from_the_stubbed_api():
    with mock.patch("shop.prices.requests.get") as get:
        get.return_value.json.return_value = {"id": "9.99"}
        found = prices.current_prices(BASE, ["tea", "cake"])
    assert found == {"tea": "9.99", "cake": "9.99"}
    assert get.call_count == 2
