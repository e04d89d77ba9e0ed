"""The virtual clock: a fixed start, moved only by advance(), emulators told."""
from datetime import UTC, datetime

import pytest

from toolkit.sandbox.clock import START, Clock, epoch_ms, iso


def test_starts_at_a_fixed_instant_and_advances(toy):
    box, session, base = toy
    assert session.get(f"{base}/api/v2/now").json() == {"now": "2026-11-02T09:00:00Z"}
    moved = box.advance(hours=2, minutes=30)
    assert moved == datetime(2026, 11, 2, 11, 30, tzinfo=UTC)
    assert session.get(f"{base}/api/v2/now").json() == {"now": "2026-11-02T11:30:00Z"}
    assert box.emulator("toy").advanced == [moved]


def test_never_backwards():
    with pytest.raises(ValueError):
        Clock().advance(seconds=-1)


def test_formats():
    moment = datetime(2026, 11, 2, 9, 0, 0, 123456, tzinfo=UTC)
    assert iso(moment) == "2026-11-02T09:00:00Z"
    assert iso(moment, 3) == "2026-11-02T09:00:00.123Z"
    assert iso(moment, 6) == "2026-11-02T09:00:00.123456Z"
    assert iso(None) is None and epoch_ms(None) is None
    assert epoch_ms(START) == 1793610000000


def test_every_answer_carries_the_virtual_clock_as_its_date(toy):
    """RFC 9110: a server with a clock sends Date; the sandbox's is its virtual one, errors included."""
    box, session, base = toy
    answers = [session.get(f"{base}/api/v2/now"), session.get(f"{base}/api/v2/no/such/route"),
               session.get(f"{base}/api/v2/things", headers={"Authorization": "Bearer wrong"})]
    assert [a.headers["Date"] for a in answers] == ["Mon, 02 Nov 2026 09:00:00 GMT"] * 3
    box.advance(days=1, seconds=1)
    assert session.get(f"{base}/api/v2/now").headers["Date"] == "Tue, 03 Nov 2026 09:00:01 GMT"
