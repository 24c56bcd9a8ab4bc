"""The explicit links: walks, strength and upkeep, relationship words and their synonyms, the tidy
pass and the graph's health. It reads only the root; search's signals walk it."""
