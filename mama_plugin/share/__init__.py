"""Sharing decisions through the repository: ``.mama/`` files reviewed in pull requests.

``mama share`` writes a project's decisions, insights and links as one Markdown file a memory
(:mod:`.files`, front matter in the strict subset of :mod:`.frontmatter`); reading them back is
a three-way merge on the last shared state (:mod:`.sync`); :mod:`.scan` lets the session start
notice a pull cheaply; :mod:`.check` is the CI gate against secrets.

Nothing is imported here: the SessionStart hook imports :mod:`.scan` alone (standard library),
and must not pay for the store.
"""
