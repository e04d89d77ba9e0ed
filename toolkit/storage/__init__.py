"""The storage floor: the DuckDB file of a workspace (loads as row versions, views, history,
diffs) and the snapshots exported from it. Knows nothing of HTTP.
"""

import warnings as _warnings

# DuckDB 1.5's `.df()` calls pandas' DataFrame.drop(inplace=True), which pandas 3.1 deprecates: a
# Pandas4Warning for every query toolkit turns into a frame (97 in the team's tests), none of it ours
# to change (DuckDB 2 no longer does it). Hidden where toolkit's own modules call it; an analyst's own
# drop(inplace=True), or DuckDB's called from their code, still says it.
_warnings.filterwarnings("ignore", message="The inplace keyword in DataFrame.drop is deprecated",
                         category=DeprecationWarning, module=r"toolkit\.")
