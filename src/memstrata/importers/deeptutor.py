"""DeepTutor-style markdown memory documents: a titled document of cited bullets.

The file is one document in the markdown form memstrata itself writes (DESIGN 4)::

    # Python learning
    ## Progress
    - Finished the chapter on decorators [^1] <!--m_01J...-->
    ---
    [^1]: chat:session_0412

Reading it here only checks that it is text; the facade parses it with the documents' own
parser (so every rule of that format holds) before anything is stored, and turns each cited
bullet into a bullet of a topic document keyed by the title.
"""

from __future__ import annotations

from pathlib import Path

from memstrata.errors import ImportFormatError
from memstrata.importers.base import ImportBatch, MarkdownSource, read_text


def load_deeptutor(path: Path) -> ImportBatch:
    source = str(path)
    text = read_text(path)
    if not text.strip():
        raise ImportFormatError("the document is empty; expected a '# <title>' line", source=source)
    return ImportBatch(
        source=source,
        format="deeptutor",
        conversations=(),
        markdown=(MarkdownSource(doc=path.stem, text=text),),
        keyed=True,
    )
