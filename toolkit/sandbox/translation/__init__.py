"""The translation management service's emulator: submissions, files, targets, phases, quotes,
downloads, claims, glossaries, memories, projects, webhooks (service.py serves them).
"""
