"""C struct layout for x86-64, the kernel struct catalogue, and cache-line coherence."""
