"""The HTTP floor: the checked client of every action, its session (auth, retries, rate budget),
how a request is spelled on the wire and how an answer is read. Knows nothing of storage.
"""
