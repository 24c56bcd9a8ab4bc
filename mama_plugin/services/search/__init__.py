"""Search: hybrid retrieval (BM25 + vectors), its ranking and signals, the vector index, the views
of a memory that are embedded, and indexing after a write. Reads learning and the graph."""
