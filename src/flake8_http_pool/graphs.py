"""Small graph helpers shared by the one-module engine and the project model."""

from __future__ import annotations

from typing import Dict, Hashable, Iterable, Mapping, TypeVar

Node = TypeVar("Node", bound=Hashable)
Value = TypeVar("Value")


def spread_to_callers(found: Dict[Node, Value], callers: Mapping[Node, Iterable[Node]]) -> Dict[Node, Value]:
    """Give every (transitive) caller of a function in `found` that function's value, the first one reached;
    `found` is extended in place and returned. `callers` maps a function to the functions calling it."""
    queue = list(found)
    while queue:
        callee = queue.pop()
        for caller in callers.get(callee, ()):
            if caller not in found:
                found[caller] = found[callee]
                queue.append(caller)
    return found
