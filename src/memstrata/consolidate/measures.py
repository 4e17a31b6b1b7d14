"""What consolidation measures by rules: how well a text's evidence supports it, how alike two
bullets are, and which section a fact's category files it under."""

from __future__ import annotations

from typing import Final

from memstrata.index.tokenize import tokenize
from memstrata.model import Category

SECTIONS: Final = {
    Category.PROFILE: "Profile",
    Category.PREFERENCE: "Preferences",
    Category.PERSONAL: "Personal",
    Category.EXPERTISE: "Expertise",
    Category.DECISION: "Decisions",
    Category.PLAN: "Plans",
    Category.EVENT: "Events",
    Category.RELATIONSHIP: "People",
    Category.HEALTH: "Health",
    Category.OTHER: "Notes",
}
#: the least share of a bullet's terms its evidence must contain (audit, and model output)
SUPPORT_THRESHOLD: Final = 0.3
#: term-set Jaccard at or above which two bullets are duplicates by rules
DUPLICATE_THRESHOLD: Final = 0.8


def support(text: str, evidence: str) -> float:
    """The share of a bullet's terms that its evidence contains."""
    terms = set(tokenize(text))
    return len(terms & set(tokenize(evidence))) / len(terms) if terms else 1.0


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0
