"""Collectives measured against their models (`latscope coll compare`, docs/collectives.md)."""
