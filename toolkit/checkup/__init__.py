"""The doctor: read-only calls per resource and a report of names and types, never values.
"""
