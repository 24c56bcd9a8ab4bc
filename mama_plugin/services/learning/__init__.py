"""Learning: what memory learns from outcomes, time and the files it cites (confidence, living
notes, hubs, staleness, premises, lessons). Reads the root; no other wing."""
