"""The test suite stubs the response that `save_report` downloads.

Risk (mocks, downloads): the stub has `content` and `raise_for_status` but no
`__enter__` nor `iter_content`; HTP201's fix makes the request a `with` and
streams it, so the stubbed test breaks. RULES.md: HTP201 is not offered where
a stub may stand for the response.
"""
# expect: report-only HTP201
# run: pytest
import os
from pathlib import Path
from unittest import mock

import reports

BASE = os.environ["SAFETY_BASE"]


class FakeResponse:
    def __init__(self, body):
        self.content = body

    def raise_for_status(self):
        pass


def test_save_report_writes_the_stubbed_body():
    stub = FakeResponse(b"%PDF-1.4 stub")
    with mock.patch("reports.requests.get", return_value=stub):
        reports.save_report(BASE + "/blob?size=64", "report.pdf")
    assert Path("report.pdf").read_bytes() == b"%PDF-1.4 stub"
