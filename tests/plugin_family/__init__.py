"""Families defined only under tests/, installed through the entry-point group by a fixture
(tests/plugin_helpers.py), the way a separate package would add one."""
