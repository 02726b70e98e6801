"""Append each export to one log file, retrying a failed transfer.

Risk (downloads): streamed into a file opened in append mode, a transfer that
breaks midway has already appended part of its body, and each retry appends
it again. RULES.md: HTP201 is not offered for a file opened in append mode.
"""
# expect: report-only HTP201
import sys
import time
from pathlib import Path

import requests

BASE = sys.argv[1]


def append_export(path, log):
    for attempt in range(3):
        try:
            reply = requests.get(BASE + path, timeout=10)
            with open(log, "ab") as out:
                out.write(reply.content)
            return True
        except requests.RequestException:
            time.sleep(0.01)
    return False


print(append_export("/blob?size=2048", "export.log"))
print(append_export("/broken/x?size=8192&sent=1024", "export.log"))
print(Path("export.log").stat().st_size)
