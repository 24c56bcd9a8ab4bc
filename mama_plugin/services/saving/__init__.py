"""Saving: a memory's validation and write, outcomes, what a save may contradict or repeat, scopes,
enrichment and a narrative's quality. Reads recall, search, learning and the graph."""
