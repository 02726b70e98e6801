"""The rules' predicates, grouped by what they look at; each reads the one `Analysis` of a module."""
