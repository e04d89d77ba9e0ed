"""The customer data platform's emulator: profiles, schema, audiences, memberships, integrations,
privacy, notifications, metrics (service.py serves them, /api/v1 and /api/v2).
"""
