"""The video review platform's emulator: the teams of the user (service.py serves them).
"""
