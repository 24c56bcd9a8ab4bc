"""The link graph: walks, link strength and upkeep, relationship words and their synonyms, the
tidy pass and the graph's health. Reads the root; no other wing."""
