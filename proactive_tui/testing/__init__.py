"""Test doubles (fake servers, fixtures) that let tests and benchmarks exercise real code paths offline."""
