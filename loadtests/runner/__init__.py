"""The comparison runner behind loadtests/run.py."""
