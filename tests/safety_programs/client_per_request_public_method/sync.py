"""A sync script calling a published client's public method in a loop.

Risk (HTP104): giving `CatalogClient.product` a new client parameter changes
a public method's signature, and callers outside the project break. RULES.md:
HTP104's parameter is only added to functions nobody outside the project can
call (a leading underscore, nested, a script's, or `application = true`):
report only here.
"""
# expect: report-only HTP104
import sys

from catalog.client import CatalogClient

catalog = CatalogClient(sys.argv[1])
for sku in ["tea", "cake", "jam"]:
    print(sku, catalog.product(sku))
