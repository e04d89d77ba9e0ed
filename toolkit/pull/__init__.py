"""Resources into the workspace: walking pages or fanning out over ids, decoding and typing the
answers, drift, incremental pulls and refresh. Given a client and a store; above both.
"""
