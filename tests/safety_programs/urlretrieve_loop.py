"""Save three blobs to files with urllib's urlretrieve.

Risk (HTP101 on urlretrieve): it opens a connection per call and has no
session to share one; the fix would have to rewrite it onto another library.
RULES.md: report only.
argv: http base.
"""
# expect: report-only HTP101
import sys
from urllib.request import urlretrieve

BASE = sys.argv[1]
for n in (1, 2, 3):
    name, headers = urlretrieve(f"{BASE}/blob?size={n * 1000}", f"blob_{n}.bin")
    print(name, headers.get("Content-Length"))
