"""Everything a save does: validation and the write, outcomes, what it may contradict or repeat (by
search's vectors), scopes, enrichment, a narrative's quality."""
