"""One module's analysis: the walked facts plus loop scopes, hot functions and resolved meanings."""
from __future__ import annotations
from .walk import collect
class Analysis:
    def __init__(self, tree, options):
        self.facts = collect(tree)
        self.options = options
