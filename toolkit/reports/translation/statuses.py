"""What the translation reports call done, cancelled and at risk: one meaning for every part of them."""
from __future__ import annotations

__all__ = ["AT_RISK_HOURS", "CANCELLED", "DONE", "DONE_SQL", "SERVICE"]

SERVICE = "translation"
# a target is done once PROCESSED, DELIVERED or COMPLETED; CANCELLED ones are left out of progress;
# every other status is open
DONE = ("PROCESSED", "DELIVERED", "COMPLETED")
CANCELLED = "CANCELLED"
DONE_SQL = "(" + ", ".join(f"'{status}'" for status in DONE) + ")"
# open targets due within this many hours and not yet in their workflow's last phase are at risk
AT_RISK_HOURS = 48
