"""Tests of the benchmarks themselves (the product's tests are in tests/)."""
