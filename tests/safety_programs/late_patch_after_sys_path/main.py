"""A service that puts its vendored libraries first on sys.path, then patches.

Risk (HTP402): moving `from gevent import monkey` above `sys.path.insert(...)`
imports a different gevent (the installed one, or none) than the vendored
copy the program was written for. RULES.md: HTP402 is safe only inside the
module's leading block of imports; it never moves the patch above a statement
that is not an import: report only here.
"""
# expect: report-only HTP402
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "vendor"))

import requests  # noqa: E402
from gevent import monkey  # noqa: E402

monkey.patch_all()

print("gevent from:", os.path.relpath(monkey.__file__, HERE))
with requests.Session() as session:
    print(session.get(sys.argv[1] + "/item/ok").json()["id"])
