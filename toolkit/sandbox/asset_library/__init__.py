"""The asset library's emulator: assets, versions, boards, guests, roles, custom fields, tags,
imports and multipart uploads (service.py serves them).
"""
