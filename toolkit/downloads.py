"""`toolkit.downloads`, the name analysts and the README use, is toolkit.http.downloads itself (the
translation service's three download steps, and the client-side download step of a URL)."""
import sys

from toolkit.http import downloads

sys.modules[__name__] = downloads
