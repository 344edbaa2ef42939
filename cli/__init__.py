"""The tame-wh command line."""

import os

# numpy's OpenBLAS starts a worker thread per core at import, and they spin between calls; the
# commands' matrix products are small, so one thread does (about 0.1 CPU-s saved per command).
# A value the user set is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
