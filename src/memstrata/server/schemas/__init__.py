"""Requests and responses of the HTTP API and the MCP server (records use their JSON
encoding): pure pydantic models, no web framework in them, one module per family of routes
(:mod:`memstrata.server.routes`), and what they share in :mod:`~memstrata.server.schemas.common`
(the checks of every body and query, the annotated types, the scope, the error body).

- :mod:`~memstrata.server.schemas.capture`: turns to remember, an import's report;
- :mod:`~memstrata.server.schemas.records`: facts to add, changes to an item;
- :mod:`~memstrata.server.schemas.search`: a search's parameters;
- :mod:`~memstrata.server.schemas.serving`: wake-up, recall and context, asked and answered;
- :mod:`~memstrata.server.schemas.documents`: a curated document's operations and changes;
- :mod:`~memstrata.server.schemas.identity`: the L0 identity;
- :mod:`~memstrata.server.schemas.runs`: curation runs and their events;
- :mod:`~memstrata.server.schemas.erasure`: what a deletion removed, or would;
- :mod:`~memstrata.server.schemas.keys`: a new API key;
- :mod:`~memstrata.server.schemas.audit`: a decision on an audit flag.

Every public name of the family modules is re-exported here, so
``from memstrata.server.schemas import SearchIn`` names the same class as its module.
"""

from __future__ import annotations

from memstrata.server.schemas.audit import AuditResolveIn
from memstrata.server.schemas.capture import (
    ImportFormat,
    ImportSourceOut,
    IngestOut,
    RememberIn,
    RoleName,
    SkippedOut,
    TurnIn,
    TurnsIn,
)
from memstrata.server.schemas.common import (
    MAX_DEPTH,
    BodyIn,
    ConflictDetail,
    DeleteReasonIn,
    ErrorDetail,
    ErrorOut,
    IsoTime,
    ItemId,
    Label,
    QueryIn,
    ScopeIn,
    ScopePart,
    Text,
    TooLargeDetail,
    check_json_values,
    not_blank,
)
from memstrata.server.schemas.documents import (
    AddIn,
    BulletId,
    CitationIn,
    DeleteIn,
    DocChangeIn,
    EditIn,
    MoveIn,
    OperationIn,
    Position,
    Section,
)
from memstrata.server.schemas.erasure import (
    DeleteOut,
    ForgetPreviewOut,
    PreviewBulletOut,
    PreviewDocumentOut,
    PreviewEpisodeOut,
    PreviewFactOut,
    PreviewSlotOut,
)
from memstrata.server.schemas.identity import IdentityIn, IdentityOut
from memstrata.server.schemas.keys import KeyIn
from memstrata.server.schemas.records import (
    ChangesIn,
    FactFieldsIn,
    FactIn,
    ListKind,
    SlotText,
    UpdateIn,
    ValueText,
    WhenIn,
    WhenText,
)
from memstrata.server.schemas.runs import (
    EventOut,
    Mode,
    RunIn,
    RunOut,
    RunPage,
)
from memstrata.server.schemas.search import MAX_K, Granularity, SearchIn
from memstrata.server.schemas.serving import (
    MAX_BUDGET,
    MIN_BUDGET,
    MIN_CONTEXT_BUDGET,
    ContextIn,
    ContextOut,
    ExplainOut,
    RecallIn,
    RecallOut,
    WakeUpIn,
    WakeUpOut,
)

__all__ = [
    "MAX_BUDGET",
    "MAX_DEPTH",
    "MAX_K",
    "MIN_BUDGET",
    "MIN_CONTEXT_BUDGET",
    "AddIn",
    "AuditResolveIn",
    "BodyIn",
    "BulletId",
    "ChangesIn",
    "CitationIn",
    "ConflictDetail",
    "ContextIn",
    "ContextOut",
    "DeleteIn",
    "DeleteOut",
    "DeleteReasonIn",
    "DocChangeIn",
    "EditIn",
    "ErrorDetail",
    "ErrorOut",
    "EventOut",
    "ExplainOut",
    "FactFieldsIn",
    "FactIn",
    "ForgetPreviewOut",
    "Granularity",
    "IdentityIn",
    "IdentityOut",
    "ImportFormat",
    "ImportSourceOut",
    "IngestOut",
    "IsoTime",
    "ItemId",
    "KeyIn",
    "Label",
    "ListKind",
    "Mode",
    "MoveIn",
    "OperationIn",
    "Position",
    "PreviewBulletOut",
    "PreviewDocumentOut",
    "PreviewEpisodeOut",
    "PreviewFactOut",
    "PreviewSlotOut",
    "QueryIn",
    "RecallIn",
    "RecallOut",
    "RememberIn",
    "RoleName",
    "RunIn",
    "RunOut",
    "RunPage",
    "ScopeIn",
    "ScopePart",
    "SearchIn",
    "Section",
    "SkippedOut",
    "SlotText",
    "Text",
    "TooLargeDetail",
    "TurnIn",
    "TurnsIn",
    "UpdateIn",
    "ValueText",
    "WakeUpIn",
    "WakeUpOut",
    "WhenIn",
    "WhenText",
    "check_json_values",
    "not_blank",
]
