"""The story the next session reads, built on search and saving; never the reverse (the checkpoint,
what later work shows done, the resume point, the session start, what the search tools answer)."""
