"""What the link verdict tool takes: a link's number and what to do with it."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .narrative import Strict


class RateLinkInput(Strict):
    """A verdict on one link: weaken it (down) or remove it (delete)."""

    link_id: Annotated[
        int, Field(ge=1, description="The link's number, as links are listed (#12 → 12).")
    ]
    verdict: Annotated[
        Literal["down", "delete"],
        Field(
            description="down: halve its confidence (a weak link is archived by the periodic "
            "pass); delete: remove it for good. Only when the user says the link is wrong."
        ),
    ]
