"""The tame-wh command line."""

import os

# numpy's OpenBLAS starts a worker thread per core at import, and they spin between calls; the
# commands' matrix products are small, so one thread does (about 0.1 CPU-s saved per command).
# A value the user set is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# pyarrow's default pool (mimalloc) backs large buffers with 2 MiB pages and keeps what is freed:
# on virtual machines whose free memory goes back to the host, each such page costs milliseconds
# to touch first (0.4 s of system time to copy a 55 MB text column, against 0.04 s from the
# system allocator), and a fresh real-text audit peaked 40 MiB higher. A value the user set is kept.
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
