"""The story the next session reads: the rolling checkpoint, what later work shows done, what
is still news, the resume point and the cliffhanger, the session start and its cache, what the
search and browsing tools answer, and what one session was shown.

It may use the rest of ``services`` (search and save), never the reverse
(``tests/test_layers.py``).
"""
