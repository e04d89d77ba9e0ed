"""The translation emulator's state: submissions as objects, documents and targets as compact columns.

Targets are the big collection (about 100 per unit of scale beyond the demo: a million at
scale 10000), so they live in parallel arrays indexed by position, and a target's id is
`Targets.BASE + position`. A wire record is built only when a page asks for it (`Rows`), so a
million targets cost tens of megabytes and a page of 200 costs 200 small dicts. Documents work the
same way. Submissions are few enough to be objects.

Target statuses (the wire names): WAITING (created, not analyzed), READY (analyzed; or in a phase,
not claimed), IN_PROCESS (claimed in a phase), PROCESSED (last phase completed; the `COMPLETED`
filter value matches it), DELIVERED, CANCELLED.

    rows = Rows(range(len(targets)), render)   # len() and slicing, as pages.answer_list wants
"""
from __future__ import annotations

__all__ = ["Batch", "CANCELLED", "DELIVERED", "DISPLAY_NAMES", "Documents", "FILE_FORMATS", "FINISHED",
           "FORMAT_INDEX", "IN_PROCESS", "LANGUAGES", "LANG_INDEX", "NO_FORMAT", "NO_PHASE", "PROCESSED",
           "READY", "Rows", "STATUS_FILTER", "SUBMISSION_STATUSES", "Submission", "TARGET_STATUS", "Targets",
           "WAITING", "Workflow", "step_period", "steps_between"]

from array import array
from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

TARGET_STATUS = ("WAITING", "READY", "IN_PROCESS", "PROCESSED", "DELIVERED", "CANCELLED")
WAITING, READY, IN_PROCESS, PROCESSED, DELIVERED, CANCELLED = range(6)
NO_PHASE = 255
# the target status filter values the service accepts; COMPLETED is PROCESSED in the store
STATUS_FILTER = {"WAITING": {WAITING}, "READY": {READY}, "IN_PROCESS": {IN_PROCESS},
                 "PROCESSED": {PROCESSED}, "COMPLETED": {PROCESSED}, "DELIVERED": {DELIVERED},
                 "CANCELLED": {CANCELLED}}
SUBMISSION_STATUSES = ("CREATING", "PREFLIGHT", "WAITING", "READY", "IN_PROCESS", "PROCESSING",
                       "PROCESSED", "DELIVERED", "CANCELLED")
# statuses the real service has and the sandbox never gives a submission: a production connector's
# pickers filter by them (docs/public-specs.md, G8), so they select nothing rather than refuse
UNMODELLED_STATUSES = ("IN_ERROR", "ARCHIVED")
FINISHED = ("PROCESSED", "DELIVERED", "CANCELLED")

LANGUAGES = ("en-US", "en-GB", "fr-FR", "de-DE", "es-ES", "it-IT", "ja-JP", "zh-CN", "pt-BR", "ko-KR",
             "nl-NL", "sv-SE", "pl-PL", "ru-RU", "ar-SA", "tr-TR", "da-DK", "fi-FI", "nb-NO", "zh-TW",
             "es-MX", "fr-CA", "cs-CZ", "he-IL")
LANG_INDEX = {code: n for n, code in enumerate(LANGUAGES)}
# the names a project's language directions carry beside the codes (targetLanguageDisplayName)
DISPLAY_NAMES = dict(zip(LANGUAGES, (
    "English (United States)", "English (United Kingdom)", "French (France)", "German (Germany)",
    "Spanish (Spain)", "Italian (Italy)", "Japanese (Japan)", "Chinese (China)", "Portuguese (Brazil)",
    "Korean (South Korea)", "Dutch (Netherlands)", "Swedish (Sweden)", "Polish (Poland)", "Russian (Russia)",
    "Arabic (Saudi Arabia)", "Turkish (Turkey)", "Danish (Denmark)", "Finnish (Finland)",
    "Norwegian Bokmal (Norway)", "Chinese (Taiwan)", "Spanish (Mexico)", "French (Canada)",
    "Czech (Czech Republic)", "Hebrew (Israel)"), strict=True))

FILE_FORMATS = ("HTML", "MS Word", "MS Excel", "JSON", "XML", "Markdown", "InDesign IDML", "XLIFF",
                "Plain Text", "Java Properties")
FORMAT_INDEX = {name: n for n, name in enumerate(FILE_FORMATS)}
# the format a source upload without fileFormatName gets, by the file's extension
FORMAT_BY_EXTENSION = {".html": "HTML", ".htm": "HTML", ".docx": "MS Word", ".doc": "MS Word", ".xlsx": "MS Excel",
                       ".json": "JSON", ".xml": "XML", ".md": "Markdown", ".idml": "InDesign IDML",
                       ".xlf": "XLIFF", ".xliff": "XLIFF", ".txt": "Plain Text", ".properties": "Java Properties"}
NO_FORMAT = 255


@dataclass
class Workflow:
    id: int
    name: str
    phases: tuple[str, ...]

    def transitions(self, position: int) -> list[dict[str, Any]]:
        """The ways out of a phase: the next phase (default), back to the previous one, or COMPLETE."""
        last = position == len(self.phases) - 1
        out = [{"name": "COMPLETE" if last else self.phases[position + 1], "default": True,
                "targetPhase": None if last else self.phases[position + 1]}]
        if position > 0:
            out.append({"name": self.phases[position - 1], "default": False,
                        "targetPhase": self.phases[position - 1]})
        return out

    def wire(self, project_ids: Sequence[int] = ()) -> dict[str, Any]:
        return {"workflowId": self.id, "name": self.name, "projectIds": list(project_ids),
                "phases": [{"name": name, "order": n + 1, "transitions": self.transitions(n)}
                           for n, name in enumerate(self.phases)]}


@dataclass
class Batch:
    id: int
    name: str
    target_format: str
    workflow_id: int
    languages: tuple[str, ...]


@dataclass(eq=False, slots=True)
class Submission:
    """One submission; `docs` and `targets` are positions in the Documents and Targets tables."""
    id: int
    project_id: int
    name: str
    status: str
    source: str
    batches: list[Batch]
    due: int
    created: int
    claim_scope: str = "LANGUAGE"
    pa_client_id: int | None = None
    started: int | None = None
    completed: int | None = None
    canceled: int | None = None
    owners: list[str] = field(default_factory=list)
    instructions: str = ""
    background: str = ""
    attributes: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, str] = field(default_factory=dict)
    docs: Sequence[int] = ()
    targets: Sequence[int] = ()
    analysis_until: int | None = None     # analysis running until this instant (epoch ms)
    analysis_done: int | None = None      # when the last analysis finished
    quotes: list[dict[str, Any]] = field(default_factory=list)
    references: list[dict[str, Any]] = field(default_factory=list)
    collaterals: list[dict[str, Any]] = field(default_factory=list)

    def languages(self) -> list[str]:
        seen: dict[str, None] = {}
        for batch in self.batches:
            seen.update(dict.fromkeys(batch.languages))
        return list(seen)

    def batch(self, name: str) -> Batch | None:
        return next((b for b in self.batches if b.name == name), None)

    def add_docs(self, positions: Iterable[int]) -> None:
        self.docs = [*self.docs, *positions]

    def add_targets(self, positions: Iterable[int]) -> None:
        self.targets = [*self.targets, *positions]

Position = TypeVar("Position")     # what a Rows renders a record from: a target's number, a Submission


class Documents:
    """Source documents as columns; `content` holds the bytes of uploaded files (seeded ones are made up)."""
    BASE = 5001

    def __init__(self) -> None:
        self.sub = array("q")           # submission id
        self.batch = bytearray()        # position of the batch in its submission
        self.name: list[str] = []
        self.words = array("l")
        self.fmt = bytearray()          # FILE_FORMATS position or NO_FORMAT
        self.created = array("q")
        self.cancelled = bytearray()
        self.content: dict[int, bytes] = {}

    def __len__(self) -> int:
        return len(self.name)

    def add(self, sub: int, batch: int, name: str, words: int, fmt: int, created: int) -> int:
        self.sub.append(sub)
        self.batch.append(batch)
        self.name.append(name)
        self.words.append(words)
        self.fmt.append(fmt)
        self.created.append(created)
        self.cancelled.append(0)
        return len(self.name) - 1

    def extend(self, sub: int, names: list[str], words: list[int], fmts: bytes, created: list[int],
               cancelled: bytes) -> None:
        """The documents of one submission at once (seed data)."""
        count = len(names)
        self.sub.extend([sub] * count)
        self.batch.extend(bytes(count))
        self.name.extend(names)
        self.words.extend(words)
        self.fmt.extend(fmts)
        self.created.extend(created)
        self.cancelled.extend(cancelled)

    def position(self, document_id: Any) -> int | None:
        try:
            n = int(document_id) - self.BASE
        except (TypeError, ValueError):
            return None
        return n if 0 <= n < len(self.name) else None

    def format_name(self, n: int) -> str | None:
        code = self.fmt[n]
        return None if code == NO_FORMAT else FILE_FORMATS[code]


class Targets:
    """One target per document and target language, as columns; `version` moves on every change,
    so a filtered view can be cached until the next one."""
    BASE = 90001

    def __init__(self) -> None:
        self.doc = array("l")           # document position
        self.lang = bytearray()         # LANGUAGES position
        self.status = bytearray()
        self.phase = bytearray()        # position in the workflow, NO_PHASE outside it
        self.done = array("q")          # dateCompleted, 0 for none
        self.meta: dict[int, dict[str, str]] = {}
        self.version = 0

    def __len__(self) -> int:
        return len(self.lang)

    def add(self, doc: int, lang: int, status: int = WAITING, phase: int = NO_PHASE, done: int = 0) -> int:
        self.doc.append(doc)
        self.lang.append(lang)
        self.status.append(status)
        self.phase.append(phase)
        self.done.append(done)
        self.version += 1
        return len(self.lang) - 1

    def extend(self, docs: list[int], langs: bytes | bytearray, status: bytes | bytearray, phase: bytes | bytearray,
               done: list[int]) -> None:
        """Many targets at once (seed data): columns filled in one call each."""
        self.doc.extend(docs)
        self.lang.extend(langs)
        self.status.extend(status)
        self.phase.extend(phase)
        self.done.extend(done)
        self.version += 1

    def position(self, target_id: Any) -> int | None:
        try:
            n = int(target_id) - self.BASE
        except (TypeError, ValueError):
            return None
        return n if 0 <= n < len(self.lang) else None

    def set(self, n: int, status: int, phase: int | None = None, done: int | None = None) -> None:
        self.status[n] = status
        if phase is not None:
            self.phase[n] = phase
        if done is not None:
            self.done[n] = done
        self.version += 1

    def having(self, positions: Sequence[int], codes: Container[int]) -> list[int]:
        status = self.status
        return [n for n in positions if status[n] in codes]


class Rows(Sequence, Generic[Position]):
    """Positions rendered to wire records only when sliced: what a page of a big collection needs."""

    def __init__(self, positions: Sequence[Position], render: Callable[[Position], dict[str, Any]]) -> None:
        self.positions, self.render = positions, render

    def __len__(self) -> int:
        return len(self.positions)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self.render(n) for n in self.positions[index]]
        return self.render(self.positions[index])


def step_period(target_id: int) -> int:
    """Hours between two steps of a target's work (3 to 6), fixed per target: a share of the work
    moves every hour of the virtual clock, the same share for the same seed."""
    return 3 + ((target_id * 2654435761) >> 7) % 4


def steps_between(target_id: int, hour_from: int, hour_to: int) -> int:
    """How many steps a target takes in the hours (hour_from, hour_to]."""
    period = step_period(target_id)
    offset = target_id % period
    return (hour_to + offset) // period - (hour_from + offset) // period
