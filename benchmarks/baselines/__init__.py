"""Frozen baselines: what the product did before a change, kept verbatim to measure against.

Each module is a copy of the earlier code, named by what it was; none is used by the product.
"""
