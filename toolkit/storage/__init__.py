"""The storage floor: the DuckDB file of a workspace (loads as row versions, views, history,
diffs) and the snapshots exported from it. Knows nothing of HTTP.
"""
