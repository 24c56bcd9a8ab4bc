"""Hybrid retrieval and what it needs: BM25 and vectors fused, ranking and its signals, the vector
index, the views of a memory that are embedded and indexing after a write. It reads learning
(hubs) and the graph (links to the top)."""
