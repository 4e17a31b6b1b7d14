"""The benchmark harness: part of the product, run as ``memstrata bench ...``."""
