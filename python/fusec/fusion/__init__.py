"""Graph-level fusion: the cost model that groups linalg ops into kernels, and its explanation."""
